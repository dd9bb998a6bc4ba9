"""Credentials in free text (tags, labels, metadata): found by shape or by key name, kept as a hash.

Pure stdlib (no duckdb, nothing of the warehouse): any family's parser may import it. A value that
holds a credential is replaced, whole, by `redact(value)` = `sha256:<hex of the trimmed value>`, the
digest the LiteLLM parser keeps for a raw `sk-` key (`sha256(key)` in
sources/api_spend/_litellm_sql.py), so a redacted tag can still be joined to an api_key_hash.
Nothing of the value is kept (no prefix, no length): a cut prefix is still a leak.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any


def _key_norm(key: str) -> str:
    """Trimmed, lower-cased, '-' and ' ' read as '_' (as the dbt macro tag_key_norm)."""
    return re.sub(r"[- ]", "_", key.strip().lower())

#: Credential shapes: a tag/label/metadata value containing one is stored only as its hash.
SECRET_VALUE_PATTERNS: tuple[str, ...] = (
    r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}",  # OpenAI / Anthropic (sk-ant-...) / LiteLLM virtual keys
    r"(?<![A-Z0-9])(AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])",  # AWS access key id
    r"\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+(?=[A-Za-z0-9._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,}",  # a token with a digit
    r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.",  # JWT
    r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
    r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"AIza[0-9A-Za-z_-]{30,}",  # Google API key
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
)
#: Key names whose value is a credential (the normalised key contains the word). password/passwd/
#: secret: any value but a number/boolean; the others: 8+ characters, no space, with a digit
#: (`token_budget: unlimited`, `max_tokens: 4096` are kept).
SECRET_KEY_WORDS_ANY: tuple[str, ...] = ("password", "passwd", "secret")
SECRET_KEY_WORDS: tuple[str, ...] = ("token", "credential", "authorization", "api_key", "apikey", "access_key",
                                     "private_key")
_SECRET_RE = re.compile("|".join(SECRET_VALUE_PATTERNS))
_PLAIN_VALUE = re.compile(r"(?i)[-+]?\d+(\.\d+)?|true|false|none|null")


def is_secret(key: str | None, value: str) -> bool:
    """True when a (key, value) pair carries a credential: its value's shape, or its key's name."""
    if _SECRET_RE.search(value):
        return True
    v = value.strip()
    k = _key_norm(key or "")
    if not v or _PLAIN_VALUE.fullmatch(v):
        return False
    if any(w in k for w in SECRET_KEY_WORDS_ANY):
        return True
    return (any(w in k for w in SECRET_KEY_WORDS) and len(v) >= 8 and " " not in v
            and any(c.isdigit() for c in v))


def redact(value: str) -> str:
    """`sha256:<hex>` of the trimmed value: the digest LiteLLM's parser stores for a raw `sk-` key
    (sources/api_spend/_litellm_sql.py `sha256(key)`), so the two can be joined."""
    return "sha256:" + hashlib.sha256(value.strip().encode("utf-8")).hexdigest()


def scrub(value: Any, key: str | None = None) -> tuple[Any, int]:
    """(value with every credential redacted, redactions). Strings are judged with their key;
    nested lists/objects (rare in tags) are judged as a whole on their JSON text."""
    if isinstance(value, str):
        return (redact(value), 1) if is_secret(key, value) else (value, 0)
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False)
        return (redact(text), 1) if is_secret(key, text) else (value, 0)
    return value, 0


#: In free text, `"password": "x"` / `secret=x` (JSON or key=value, quotes doubled by CSV or not).
_KEYED_RE = re.compile(r"""(?i)((?:password|passwd|secret)[\w -]*["']*\s*[:=]\s*["']*)([^"',}\s]+)""")


def scrub_text(text: str | None) -> str | None:
    """Free text (a rejected line's text, an error message): each credential shape, and each value
    written after a password/passwd/secret key, replaced by its hash; the rest kept. Call it before
    cutting a text: a cut key may no longer look like one."""
    if not text:
        return text
    text = _SECRET_RE.sub(lambda m: redact(m.group(0)), text)
    return _KEYED_RE.sub(lambda m: m.group(1) + redact(m.group(2)), text)
