"""Tag normalisation: every tag source becomes one JSON object text.

Applied to DISTINCT tag strings only (tags repeat heavily), then joined back in SQL, so a
1M-row file costs one Python call per distinct tag set, not per row.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from sources.secrets import scrub_text


def normalise_tags(text: str | None) -> tuple[str | None, list[str], bool]:
    """Return (normalised JSON object text, merged keys, valid).

    Accepts a JSON object, or an object without braces (Azure `"a": "b","c": "d"`).
    Keys are trimmed; keys equal after trimming (`"org"` and `" org"`, or exact duplicates)
    are merged keeping the first non-empty value. Invalid text gives (None, [], False).
    Credentials in values are redacted later, with every family's (sources/secrets.py scrub_output).
    """
    if text is None:
        return None, [], True
    body = text.strip()
    if not body:
        return None, [], True
    if not body.startswith("{"):
        body = "{" + body + "}"
    try:
        pairs = json.loads(body, object_pairs_hook=lambda kv: kv)
    except ValueError:
        return None, [], False
    if not isinstance(pairs, list):
        return None, [], False
    out: dict[str, Any] = {}
    merged: list[str] = []
    for key, value in pairs:
        k = str(key).strip()
        if k in out:
            merged.append(k)
            if _empty(out[k]) and not _empty(value):
                out[k] = value
        else:
            out[k] = value
    if not out:
        return None, merged, True
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")), merged, True


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def normalise_distinct(values: list[str | None]) -> tuple[list[str | None], list[str]]:
    """Normalise a list of distinct tag strings; return (normalised list, warnings)."""
    merged_keys: Counter[str] = Counter()
    invalid: list[str] = []
    out: list[str | None] = []
    for v in values:
        norm, merged, ok = normalise_tags(v)
        out.append(norm)
        merged_keys.update(merged)
        if not ok:
            invalid.append(v if v is not None else "")
    warnings: list[str] = []
    if merged_keys:
        keys = ", ".join(f"{k!r} ({n} tag sets)" for k, n in sorted(merged_keys.items()))
        warnings.append(f"Tags: merged near-duplicate keys (trimmed equal; first non-empty value kept): {keys}")
    if invalid:
        warnings.append(
            f"Tags: {len(invalid)} distinct tag value(s) are not a JSON object and were set to NULL, "
            f"e.g. {scrub_text(invalid[0])[:80]!r}"
        )
    return out, warnings
