"""The ECB euro foreign exchange reference rates (`eurofxref-hist.csv` / `eurofxref.csv`).

Layout: `Date,USD,JPY,...,` (a trailing comma), one row per TARGET business day, newest first; a
cell is the quote-currency units for 1 EUR, or `N/A` where the ECB does not quote that currency on
that day (a discontinued currency, a later addition). `N/A` is no observation, not an error.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from sources.common import ParseOutput, SourceFormat, UnreadableFile, head_text
from sources.fx import _rates

FORMAT_NAME = "ecb_reference_rates"


def detect(path: Path, head: bytes) -> bool:
    """A CSV whose header is `Date` then currency codes (USD among them)."""
    first = head_text(head).lstrip("\ufeff").splitlines()[:1]
    if not first:
        return False
    cols = [c.strip() for c in first[0].split(",") if c.strip()]
    return len(cols) >= 2 and cols[0] == "Date" and "USD" in cols[1:] and all(_rates.CURRENCY_RE.match(c) for c in cols[1:])


def parse(path: Path) -> ParseOutput:
    """One `fx_rates` row per (day, currency) quoted against EUR; bad cells rejected one by one."""
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header or header[0].strip() != "Date":
        raise UnreadableFile(path, 1, "no 'Date,<currency>,...' header")
    currencies = [c.strip() for c in header[1:]]
    out = ParseOutput()
    rows: list[dict] = []
    not_quoted = 0
    for line, cells in enumerate(reader, start=2):
        if not cells or not any(c.strip() for c in cells):
            continue
        day, bad = _rates.parse_date(cells[0], line, "Date")
        if bad:
            out.rejects.append(bad)
            continue
        for ccy, cell in zip(currencies, cells[1:]):
            if not ccy or not cell.strip():
                continue
            if cell.strip().upper() == "N/A":
                not_quoted += 1
                continue
            rate, bad = _rates.parse_rate(cell, line, ccy)
            if bad:
                out.rejects.append(bad)
                continue
            rows.append({"rate_date": day, "base": "EUR", "quote": ccy, "rate": str(rate),
                         "source": "ECB euro reference rate", "_source_line": line})
    kept, jumps = _rates.check_jumps(rows)
    out.rejects.extend(jumps)
    if not_quoted:
        out.warnings.append(f"{not_quoted} N/A cells: currencies the ECB did not quote that day (no observation)")
    out.tables["fx_rates"] = _rates.table(kept)
    return out


FORMATS = [SourceFormat(FORMAT_NAME, "fx", detect, parse, "ECB euro foreign exchange reference rates (eurofxref CSV)")]

