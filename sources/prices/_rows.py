"""Shared pieces of the price parsers: the observation row schema, value checks, JSON loading.

Kept private (leading underscore, no FORMATS) so catalog discovery finds nothing here.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pyarrow as pa

from reference import ISO_4217_SET
from sources.common import Reject, UnreadableFile

OBSERVATIONS = "gpu_price_observations"
QUOTES = "price_quotes"

OBS_SCHEMA = pa.schema(
    [
        ("provider", pa.string()),
        ("sku", pa.string()),
        ("sku_description", pa.string()),
        ("region", pa.string()),
        ("pricing_category", pa.string()),
        ("term_details", pa.string()),
        ("currency", pa.string()),
        ("price", pa.string()),
        ("price_unit", pa.string()),
        ("gpu_model", pa.string()),
        ("gpu_count", pa.string()),
        ("observed_at", pa.timestamp("us")),
        ("observed_at_basis", pa.string()),
        ("source", pa.string()),
        ("source_format", pa.string()),
        ("_source_line", pa.int64()),
    ]
)

# ISO 4217 active codes (reference/__init__.py, the one list). A price in anything else is rejected
# (unknown_currency) rather than guessed, because FX conversion downstream needs a real code.
CURRENCIES = ISO_4217_SET


# What stg_prices__observations requires of every price (blocking not-null checks there): a row missing one
# is a reject with its line here, so one incomplete record never withholds the whole publication.
REQUIRED = ("provider", "sku", "pricing_category", "currency", "price", "price_unit", "observed_at", "source")


def obs_table(rows: list[dict[str, Any]], rejects: list[Reject]) -> pa.Table:
    """Arrow table of observation rows (missing keys become NULL) with the contract's column set.

    A row without a REQUIRED value is left out and added to `rejects` (`missing_source` for the source,
    else `missing_value`; one reject per line and column however many rows the record gave).
    A row without `observed_at_basis` took its time from the source itself ("source")."""
    kept: list[dict[str, Any]] = []
    named: set[tuple[int | None, str]] = set()
    for row in rows:
        missing = [c for c in REQUIRED if row.get(c) is None or (isinstance(row[c], str) and not row[c].strip())]
        if not missing:
            kept.append(row)
            continue
        line = row.get("_source_line")
        for column in missing:
            if (line, column) not in named:
                named.add((line, column))
                rule = "missing_source" if column == "source" else "missing_value"
                rejects.append(Reject(line, rule, f"the price of {row.get('sku') or 'this record'} has no "
                                      f"{column}", column, None))
    rows = kept
    cols = {f.name: [r.get(f.name) for r in rows] for f in OBS_SCHEMA}
    cols["observed_at_basis"] = [b or "source" for b in cols["observed_at_basis"]]
    return pa.table(cols, schema=OBS_SCHEMA)


def check_price(value: Any, line: int | None, column: str = "price") -> tuple[str | None, Reject | None]:
    """Exact decimal text of a price, or a Reject (non_numeric, zero_price, negative_price).

    A zero price is rejected because no source in this family means "free" by it: AWS uses
    $0.00 for capacity-reservation duplicates, others for "not offered".
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, Reject(line, "missing_price", "price is empty", column, None)
    if isinstance(value, float):  # json loaded without parse_float=Decimal; repr keeps the digits
        value = repr(value)
    try:
        dec = Decimal(str(value).strip())
    except InvalidOperation:
        return None, Reject(line, "non_numeric", f"price {value!r} is not a number", column, str(value))
    if not dec.is_finite():
        return None, Reject(line, "non_numeric", f"price {value!r} is not finite", column, str(value))
    if dec == 0:
        return None, Reject(line, "zero_price", "price is 0", column, str(value))
    if dec < 0:
        return None, Reject(line, "negative_price", f"price {value} is negative", column, str(value))
    return format(dec, "f"), None


def check_currency(
    value: Any, line: int | None, column: str = "currency"
) -> tuple[str | None, Reject | None]:
    """Upper-case ISO 4217 code, or a Reject(unknown_currency)."""
    code = str(value or "").strip().upper()
    if code in CURRENCIES:
        return code, None
    return None, Reject(
        line, "unknown_currency", f"currency {value!r} is not an ISO 4217 code", column, str(value)
    )


def parse_ts(text: Any) -> datetime | None:
    """ISO-8601 / RFC 3339 text -> naive UTC datetime; naive input is taken as UTC; None if unparseable."""
    if text is None or str(text).strip() == "":
        return None
    raw = str(text).strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        ts = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if ts.tzinfo is not None:
        ts = ts.astimezone(UTC).replace(tzinfo=None)
    return ts


# A date in a file's name (prices_2025-04-10.json, offers-20250410.csv): the file's own date.
_NAME_DATE = re.compile(r"(?<!\d)(20\d{2})-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])(?!\d)")


def fetch_time(path: Path, fetched_at: datetime | None) -> tuple[datetime, str, str | None]:
    """The time to stamp rows whose source carries no timestamp of its own: (time, basis, note).

    basis says where the time came from, so no screen passes a load time off as an observation:
    - "fetched": the pipeline fetched the file over HTTP and passes that time (`fetched_at`);
    - "file_name": a date in the file's own name (midnight UTC of that day);
    - "undated": nothing dates the prices. The time is then the file's modification time, kept
      only to order versions of the file (a copy or a clone resets it); screens say "undated".
    """
    if fetched_at is not None:
        if fetched_at.tzinfo is not None:
            fetched_at = fetched_at.astimezone(UTC).replace(tzinfo=None)
        return fetched_at, "fetched", None
    named = _NAME_DATE.search(path.name)
    if named:
        try:
            return datetime(int(named[1]), int(named[2]), int(named[3])), "file_name", None
        except ValueError:  # 2025-02-30: not a date, so the name dates nothing
            pass
    mtime = datetime.fromtimestamp(os.path.getmtime(path), tz=UTC).replace(tzinfo=None)
    return mtime, "undated", (
        f"{path.name}: no date in the source or its name: its prices are undated "
        f"(observed_at holds the file's modification time {mtime.isoformat()}Z only to order versions)"
    )


_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[}\]])')


def strip_trailing_commas(text: str) -> str:
    """Remove commas directly before `}` or `]`, leaving string literals untouched."""
    return _TRAILING_COMMA.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)


def load_json(path: Path, *, lenient: bool = False) -> tuple[Any, list[str]]:
    """Parse a JSON file with exact numbers (Decimal). Raises UnreadableFile with the line/column.

    `lenient=True` retries once with trailing commas removed (AWS offer excerpts carry them) and
    returns a warning saying so; anything else that is broken stays fatal.
    """
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise UnreadableFile(path, None, "file is empty")
    try:
        return json.loads(text, parse_float=Decimal), []
    except json.JSONDecodeError as first:
        if lenient:
            try:
                doc = json.loads(strip_trailing_commas(text), parse_float=Decimal)
            except json.JSONDecodeError:
                pass
            else:
                note = (
                    f"{path.name}: not strict JSON ({first.msg} at line {first.lineno} col {first.colno}); "
                    "trailing commas removed and parsed leniently"
                )
                return doc, [note]
        raise UnreadableFile(
            path,
            first.lineno,
            f"invalid JSON: {first.msg} at line {first.lineno} column {first.colno} (char {first.pos})",
        ) from first


def term_json(**items: Any) -> str | None:
    """Compact JSON text of the non-null term details, keys sorted (stable across runs)."""
    clean = {k: v for k, v in items.items() if v is not None and v != ""}
    return json.dumps(clean, sort_keys=True, default=str) if clean else None


def num_text(value: Any) -> str | None:
    """A count or quantity as exact text ('8', '0.5'), None when absent or not numeric."""
    if value is None or str(value).strip() in ("", "NA"):
        return None
    try:
        return format(Decimal(str(value).strip()).normalize(), "f")
    except InvalidOperation:
        return None
