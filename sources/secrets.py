"""Credentials in free text (tags, labels, metadata, commands): found by shape or key name, kept as a hash.

No duckdb, nothing of the warehouse (stdlib + pyarrow): any family's parser may import it, and
warehouse/ingest.py runs `scrub_output` on every parsed file of every family before the raw load.
A one-word credential (a tag value, an `api_key` cell) is replaced whole by `redact(value)` =
`sha256:<hex of the trimmed value>`, the digest the LiteLLM parser keeps for a raw `sk-` key
(`sha256(key)` in sources/api_spend/_litellm_sql.py), so a redacted tag can still be joined to an
api_key_hash; in free text (a command line, a description) only the credential is replaced and the
other words stay. Nothing of a credential is kept (no prefix, no length): a cut prefix is still a leak.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from sources.common import ParseOutput


def _key_norm(key: str) -> str:
    """Trimmed, lower-cased, '-' and ' ' read as '_' (as the dbt macro tag_key_norm)."""
    return re.sub(r"[- ]", "_", key.strip().lower())

#: Credential shapes: a tag/label/metadata value containing one is stored only as its hash.
SECRET_VALUE_PATTERNS: tuple[str, ...] = (
    r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}",  # OpenAI / Anthropic (sk-ant-...) / LiteLLM virtual keys
    r"(?<![A-Z0-9])(AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])",  # AWS access key id
    r"\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+(?=[A-Za-z0-9._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,}",  # a token with a digit
    # JWT, signature included: header.payload alone would leave the signature, which is what
    # makes the token usable, readable after the hash.
    r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    # A password in a URL's user-info (postgres://admin:secret@db); `_URL_PASSWORD` keeps the rest.
    r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:(?!sha256:)[^/\s@]+@",
    r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
    r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"AIza[0-9A-Za-z_-]{30,}",  # Google API key
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}",  # Hugging Face token
)
#: Key names whose value is a credential (the normalised key contains the word). password/passwd/
#: secret: any value but a number/boolean; the others: 8+ characters, no space, with a digit
#: (`token_budget: unlimited`, `max_tokens: 4096` are kept).
SECRET_KEY_WORDS_ANY: tuple[str, ...] = ("password", "passwd", "secret")
SECRET_KEY_WORDS: tuple[str, ...] = ("token", "credential", "authorization", "api_key", "apikey", "access_key",
                                     "private_key")
_SECRET_RE = re.compile("|".join(SECRET_VALUE_PATTERNS))
#: Keys that name a credential but hold none: its id, hash, name or a count (`api_key_id`, `token_type`).
_NOT_A_CREDENTIAL_KEY = re.compile(r"_(id|ids|hash|name|alias|type|count|budget|limit)$")
_PLAIN_VALUE = re.compile(r"(?i)[-+]?\d+(\.\d+)?|true|false|none|null")


def is_secret(key: str | None, value: str) -> bool:
    """True when a (key, value) pair carries a credential: its value's shape, or its key's name."""
    if _SECRET_RE.search(value):
        return True
    v = value.strip()
    k = _key_norm(key or "").replace("tokenizer", "")
    if not v or _PLAIN_VALUE.fullmatch(v) or _NOT_A_CREDENTIAL_KEY.search(k):
        return False
    if any(w in k for w in SECRET_KEY_WORDS_ANY):
        return True
    return (any(w in k for w in SECRET_KEY_WORDS) and len(v) >= 8 and " " not in v
            and any(c.isdigit() for c in v))


def redact(value: str) -> str:
    """`sha256:<hex>` of the trimmed value: the digest LiteLLM's parser stores for a raw `sk-` key
    (sources/api_spend/_litellm_sql.py `sha256(key)`), so the two can be joined."""
    return "sha256:" + hashlib.sha256(value.strip().encode("utf-8")).hexdigest()


#: In free text: `"password": "x"`, `secret=x`, `api_key: x` (JSON or key=value, quotes doubled by
#: CSV or not), and command-line flags `--hf-token x`, `--api-key=x`. Each value is judged by
#: `is_secret` with its key, so `max_tokens=4096` or `--max-num-batched-tokens 8192` stay.
_KEY_WORD = r"(?:password|passwd|secret|token|credential|authorization|api[-_]?key|access[-_]?key|private[-_]?key)"
_KEYED_RE = re.compile(rf"""(?i)((?<![\w-])[\w-]*{_KEY_WORD}[\w-]*["']*\s*[:=]\s*["']*)([^"',}}\s]+)""")
_FLAG_RE = re.compile(rf"""(?i)((?<![\w-])--[\w-]*{_KEY_WORD}[\w-]*\s+["']?)([^"'\s-][^"'\s]*)""")


#: In free text only the password of a URL's user-info is replaced; scheme, user and host stay.
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)(?!sha256:)([^/\s@]+)(@)")


def scrub_text_n(text: str) -> tuple[str, int]:
    """(free text with every credential replaced by its hash, credentials replaced)."""
    found = 0

    def url(m: re.Match[str]) -> str:
        nonlocal found
        found += 1
        return m.group(1) + redact(m.group(2)) + m.group(3)

    def shape(m: re.Match[str]) -> str:
        nonlocal found
        found += 1
        return redact(m.group(0))

    def keyed(m: re.Match[str]) -> str:
        nonlocal found
        key, value = m.group(1).strip(" \"':=-"), m.group(2)
        if value.startswith("sha256:") or not is_secret(key, value):
            return m.group(0)
        found += 1
        return m.group(1) + redact(value)

    text = _SECRET_RE.sub(shape, _URL_PASSWORD.sub(url, text))
    for rx in (_KEYED_RE, _FLAG_RE):
        text = rx.sub(keyed, text)
    return text, found


def scrub_text(text: str | None) -> str | None:
    """Free text (a rejected line's text, an error message, a command line): each credential shape,
    and each credential written after a key (`password=`, `"api_key": `, `--hf-token `), replaced by
    its hash; the rest kept. Call it before cutting a text: a cut key may no longer look like one."""
    if not text:
        return text
    return scrub_text_n(text)[0]


# --------------------------------------------------------------------------------------------------
# Whole tables: every family's parsed output passes here before the raw load (warehouse/ingest.py)
# --------------------------------------------------------------------------------------------------

#: RE2 (Arrow) pre-filter over a column's distinct values; `scrub_value` decides on the few it picks.
CANDIDATE_RE2 = (r"(?i)sk-|AKIA|ASIA|bearer|eyJ|gh[pousr]_|github_pat_|hf_|xox|AIza|PRIVATE KEY|passw|secret"
                 r"|token|credential|authoriz|api[-_]?key|access[-_]?key|://[^/@\s]*:[^/@\s]+@")
#: Already a digest (LiteLLM's api_key hash, a redacted value): never judged again.
_DIGEST = re.compile(r"(sha256:)?[0-9a-f]{64}")


def _scrub_json(obj: Any, key: str | None = None) -> tuple[Any, int]:
    if isinstance(obj, dict):
        total = 0
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out[k], n = _scrub_json(v, k)
            total += n
        return out, total
    if isinstance(obj, list):
        items = [_scrub_json(v, key) for v in obj]
        return [v for v, _ in items], sum(n for _, n in items)
    if isinstance(obj, str):
        return _judge(key, obj)
    return obj, 0


def _judge(key: str | None, value: str) -> tuple[str, int]:
    """One string with its key: a credential-named key or a one-word credential is replaced whole;
    free text (a command line, a description) keeps its words and loses only the credentials."""
    s = value.strip()
    if not s or _DIGEST.fullmatch(s) or (key or "").lower().endswith("_hash"):
        return value, 0
    if " " in s and not (is_secret(key, value) and not _SECRET_RE.search(value)):
        return scrub_text_n(value)
    return (redact(value), 1) if is_secret(key, value) else scrub_text_n(value)


def scrub_value(value: str, column: str | None = None) -> tuple[str, int]:
    """(one cell with its credentials redacted, credentials found). A JSON object/list cell (tags,
    labels, metadata) is judged key by key; any other cell whole, with its column name as the key
    (an `api_key` column), then as free text (a command line, a description)."""
    s = value.strip()
    if s[:1] in ("{", "["):
        try:
            obj = json.loads(s)
        except ValueError:
            obj = None
        if isinstance(obj, (dict, list)):
            new, n = _scrub_json(obj)
            return (json.dumps(new, ensure_ascii=False, separators=(",", ":")), n) if n else (value, 0)
    return _judge(column, value)


def scrub_table(tbl: pa.Table) -> tuple[pa.Table, dict[str, int]]:
    """(table with every credential in its string columns redacted, cells changed per column).

    Judged on each column's distinct values (a 10-million-row DCGM table has a few hundred), picked
    by one RE2 pass, so the cost does not grow with repeated values."""
    counts: dict[str, int] = {}
    for pos, name in enumerate(tbl.column_names):
        typ = tbl.schema.field(pos).type
        if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)) or tbl.num_rows == 0:
            continue
        col = tbl.column(pos)
        distinct = pc.unique(col).drop_null()
        if len(distinct) == 0:
            continue
        picked = distinct.filter(pc.fill_null(pc.match_substring_regex(distinct, CANDIDATE_RE2), False))
        mapping: dict[str, str] = {}
        for v in picked.to_pylist():
            new, n = scrub_value(v, name)
            if n:
                mapping[v] = new
        if not mapping:
            continue
        idx = pc.index_in(col, value_set=pa.array(list(mapping), typ))
        repl = pc.take(pa.array(list(mapping.values()), typ), idx)
        tbl = tbl.set_column(pos, tbl.field(pos), pc.if_else(pc.is_null(idx), col, repl))
        counts[name] = int(pc.sum(pc.is_valid(idx)).as_py() or 0)
    return tbl, counts


def scrub_output(output: ParseOutput) -> tuple[ParseOutput, dict[str, int]]:
    """A parser's output with every credential redacted: each table's string columns, and each
    reject's value and message; returns cells changed per `table.column` (`rejects` for rejects)."""
    from sources.common import ParseOutput, Reject  # sources.common imports numpy; keep this module light

    counts: dict[str, int] = {}
    tables = {}
    for name, tbl in output.tables.items():
        tables[name], per_col = scrub_table(tbl)
        counts.update({f"{name}.{col}": n for col, n in per_col.items()})
    rejects, hits = [], 0
    for r in output.rejects:
        value, message = scrub_text(r.value), scrub_text(r.message)
        hits += (value != r.value) + (message != r.message)
        rejects.append(Reject(r.line, r.rule, message or "", r.column, value))
    if hits:
        counts["rejects"] = hits
    return ParseOutput(tables=tables, rejects=rejects, warnings=[scrub_text(w) or "" for w in output.warnings]), counts


#: Characters a recorded name never carries: control characters (a newline would forge a log or
#: manifest line, an escape sequence would repaint a terminal) and the Unicode bidi overrides.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@functools.lru_cache(maxsize=16384)  # landing scrubs every input's path twice a refresh (its check, then its run)
def scrub_name(name: str, limit: int = 255) -> str:
    """A file name or path as it may be recorded (landing manifest, hash cache, `source_files`, rejects,
    Dagster's run history): credentials replaced by their hash, unprintable characters by `?`, cut to
    `limit` characters after the scrub (a cut credential may no longer look like one)."""
    return _UNPRINTABLE.sub("?", scrub_text(name) or "")[:limit]
