"""Helpers shared by the api_spend JSON parsers (provider reports, price catalog).

These documents are small (a page of time buckets, a ~1-3 MB catalog), so they are walked in
Python. Money goes through `Decimal` parsed from the JSON text itself (`parse_float=Decimal`),
never through a binary float, and leaves as a plain decimal string the loader casts.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pyarrow as pa

from reference import ISO_4217_SET
from sources.common import Reject, UnreadableFile

# ISO 4217 active codes (reference/__init__.py, the one list; this was a 10-code copy that rejected
# valid codes such as SEK). Anything else is rejected (unknown_currency) rather than silently
# summed with USD.
KNOWN_CURRENCIES = ISO_4217_SET

_INT_TEXT = re.compile(r"^-?\d+$")


class RowError(Exception):
    """A single value is unusable; the caller turns it into a `Reject` and drops the row."""

    def __init__(self, rule: str, message: str, column: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
        self.column = column
        self.value = None if value is None else str(value)

    def reject(self, line: int | None) -> Reject:
        """This error as a `Reject` at `line`."""
        return Reject(line, self.rule, self.message, self.column, self.value)


def load_json(path: Path) -> Any:
    """Parse a JSON file exactly (floats as Decimal); raise UnreadableFile with the line on failure."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, None, f"not UTF-8 text: {exc}") from exc
    try:
        return json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise UnreadableFile(path, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from exc


def decimal_text(value: Any, column: str, *, allow_negative: bool = True) -> str | None:
    """A money/price value as an exact decimal string; None stays None.

    JSON numbers (already Decimal or int) are accepted; numeric *strings* are accepted only where
    the provider documents strings (the caller passes them); other types raise `non_numeric`.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise RowError("non_numeric", f"{column} is a boolean, expected a number", column, value)
    if isinstance(value, (int, Decimal)):
        dec = Decimal(value)
    else:
        raise RowError("non_numeric", f"{column} is {type(value).__name__}, expected a number", column, value)
    if not dec.is_finite():
        raise RowError("non_numeric", f"{column} is not finite", column, value)
    if not allow_negative and dec < 0:
        raise RowError("negative_price", f"{column} is negative", column, value)
    return format(dec, "f")


def decimal_string(value: Any, column: str) -> str | None:
    """A decimal carried as a JSON string (Anthropic amounts) -> exact decimal text."""
    if value is None:
        return None
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return decimal_text(value, column)
    if not isinstance(value, str):
        raise RowError("non_numeric", f"{column} is {type(value).__name__}, expected a decimal string", column, value)
    try:
        dec = Decimal(value.strip())
    except InvalidOperation:
        raise RowError("non_numeric", f"{column} is not a decimal number", column, value) from None
    if not dec.is_finite():
        raise RowError("non_numeric", f"{column} is not finite", column, value)
    return format(dec, "f")


def int_value(value: Any, column: str) -> int | None:
    """A token/request count: JSON int (or an integral Decimal); negative or text is an error."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise RowError("non_numeric", f"{column} is a boolean", column, value)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)
    if not isinstance(value, int):
        raise RowError("non_numeric", f"{column} is {type(value).__name__}, expected an integer", column, value)
    if value < 0:
        raise RowError("negative_quantity", f"{column} is negative", column, value)
    return value


def unix_seconds(value: Any, column: str) -> datetime:
    """Unix seconds (OpenAI bucket bounds) -> naive UTC datetime."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise RowError("invalid_timestamp", f"{column} is not Unix seconds", column, value)
    try:
        return datetime.fromtimestamp(float(value), tz=UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        raise RowError("invalid_timestamp", f"{column} is out of range", column, value) from None


def rfc3339(value: Any, column: str) -> datetime:
    """RFC 3339 timestamp (Anthropic bucket bounds) -> naive UTC datetime; offset required."""
    if not isinstance(value, str):
        raise RowError("invalid_timestamp", f"{column} is not an RFC 3339 string", column, value)
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise RowError("invalid_timestamp", f"{column} is not an RFC 3339 timestamp", column, value) from None
    if parsed.tzinfo is None:
        # A bucket bound without an offset is ambiguous; the API always sends one.
        raise RowError("invalid_timestamp", f"{column} has no UTC offset", column, value)
    return parsed.astimezone(UTC).replace(tzinfo=None)


def currency_code(value: Any, column: str = "currency") -> str:
    """Normalise a currency code to upper-case ISO 4217 ('usd' -> 'USD'); unknown codes raise."""
    if not isinstance(value, str) or not value.strip():
        raise RowError("unknown_currency", "currency is missing", column, value)
    code = value.strip().upper()
    if code not in KNOWN_CURRENCIES:
        raise RowError("unknown_currency", f"currency {code!r} is not a known ISO 4217 code", column, value)
    return code


def check_period(start: datetime, end: datetime) -> None:
    """A bucket must end after it starts."""
    if end <= start:
        raise RowError("period_reversed", "bucket ends before (or when) it starts", "bucket_end", end.isoformat())


def require(obj: Any, key: str, where: str) -> Any:
    """obj[key] where the key is mandatory; a missing key is a `missing_field` row error."""
    if not isinstance(obj, dict):
        raise RowError("invalid_record", f"{where} is not an object", None, type(obj).__name__)
    if key not in obj:
        raise RowError("missing_field", f"{where} has no {key!r}", key, None)
    return obj[key]


def build_table(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows (dicts) -> arrow table with a fixed schema, so an empty result still has columns."""
    return pa.Table.from_pylist(rows, schema=schema)


def page_buckets(doc: Any, path: Path) -> list[Any]:
    """Time buckets of a paged report: its `data`, plus the `data` of each page in `pages`
    (files written by fetch.write_pages). A document without them is unreadable."""
    if not isinstance(doc, dict):
        raise UnreadableFile(path, 1, "top level is not a JSON object")
    data = doc.get("data")
    pages = doc.get("pages", [])
    if not isinstance(data, list) or not isinstance(pages, list):
        raise UnreadableFile(path, 1, "no 'data' list of time buckets")
    buckets = list(data)
    for n, page in enumerate(pages, start=1):
        if not isinstance(page, dict) or not isinstance(page.get("data"), list):
            raise UnreadableFile(path, None, f"merged page {n} has no 'data' list")
        buckets.extend(page["data"])
    return buckets


def more_pages_pending(doc: dict[str, Any]) -> tuple[bool, Any]:
    """(has_more, next_page) of the document, or of its last merged page."""
    pages = doc.get("pages") or []
    last = pages[-1] if pages and isinstance(pages[-1], dict) else doc
    return last.get("has_more") is True, last.get("next_page")
