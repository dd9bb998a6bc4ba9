"""What every exchange-rate format shares: the checks on a rate and the raw `fx_rates` table.

A rate is `rate` units of `quote` for one unit of `base` on `rate_date` (the ECB publishes
EUR -> X). A rate must be a positive number, and a currency pair may not move more than
`MAX_DAILY_JUMP` between two consecutive observations in one file: no major currency has (the
Turkish lira's worst ECB day since 2001 is about 15 %; the rouble's in 2022 about 30 % and the ECB
suspended it days later); a larger jump is a typo or a unit change (a rate per 100 units), and
converting with it would move every figure by that much.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation

import pyarrow as pa

from sources.common import Reject

#: Largest accepted move between consecutive observations of one pair, as a fraction.
MAX_DAILY_JUMP = Decimal("0.35")
#: ISO 4217 shape: three capital letters.
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")

SCHEMA = pa.schema([
    ("rate_date", pa.date32()), ("base", pa.string()), ("quote", pa.string()), ("rate", pa.string()),
    ("source", pa.string()), ("_source_line", pa.int64()),
])


def parse_rate(text: str, line: int, column: str) -> tuple[Decimal | None, Reject | None]:
    """A positive decimal, else a reject naming the line and column."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        return None, Reject(line, "not_a_number", f"rate {text!r} is not a number", column, text)
    if not value.is_finite() or value <= 0:
        return None, Reject(line, "rate_not_positive", f"rate {text} must be > 0", column, text)
    return value, None


def check_jumps(rows: list[dict]) -> tuple[list[dict], list[Reject]]:
    """Reject a rate that moved more than MAX_DAILY_JUMP from the pair's previous kept rate."""
    kept: list[dict] = []
    rejects: list[Reject] = []
    last: dict[tuple[str, str], Decimal] = {}
    for row in sorted(rows, key=lambda r: (r["base"], r["quote"], r["rate_date"])):
        pair = (row["base"], row["quote"])
        rate = Decimal(row["rate"])
        prev = last.get(pair)
        if prev is not None and abs(rate / prev - 1) > MAX_DAILY_JUMP:
            rejects.append(Reject(row["_source_line"], "rate_jump",
                                  f"{pair[0]}->{pair[1]} {rate} on {row['rate_date']} moved {float(abs(rate / prev - 1)):.0%} "
                                  f"from {prev} (bound {MAX_DAILY_JUMP:.0%})", pair[1], str(rate)))
            continue
        last[pair] = rate
        kept.append(row)
    return kept, rejects


def parse_date(text: str, line: int, column: str) -> tuple[date | None, Reject | None]:
    """An ISO date (YYYY-MM-DD), else a reject."""
    try:
        return date.fromisoformat(text.strip()[:10]), None
    except ValueError:
        return None, Reject(line, "bad_date", f"date {text!r} is not YYYY-MM-DD", column, text)


def table(rows: list[dict]) -> pa.Table:
    """The raw `fx_rates` rows as an arrow table (rates as strings: the loader casts to DECIMAL)."""
    rows = sorted(rows, key=lambda r: r["_source_line"])
    return pa.Table.from_pylist(rows, schema=SCHEMA)
