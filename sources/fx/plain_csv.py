"""A plain rates CSV: `date,base,quote,rate` (optional `source`), one pair per row.

`rate` is the units of `quote` for 1 `base` (e.g. `2025-04-14,USD,CAD,1.3868`): a treasury's own
rates, a bank's, or rates the ECB does not publish.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from sources.common import ParseOutput, Reject, SourceFormat, head_text
from sources.fx import _rates

FORMAT_NAME = "fx_rates_csv"
_REQUIRED = {"date", "base", "quote", "rate"}


def detect(path: Path, head: bytes) -> bool:
    """A CSV header naming date, base, quote and rate."""
    first = head_text(head).lstrip("\ufeff").splitlines()[:1]
    return bool(first) and _REQUIRED <= {c.strip().lower() for c in first[0].split(",")}


def parse(path: Path) -> ParseOutput:
    """One `fx_rates` row per valid line; a bad date, currency or rate rejects that line only."""
    path = Path(path)
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig", errors="replace")))
    reader.fieldnames = [f.strip().lower() for f in reader.fieldnames or []]
    out = ParseOutput()
    rows: list[dict] = []
    for line, rec in enumerate(reader, start=2):
        day, bad = _rates.parse_date(rec.get("date") or "", line, "date")
        if bad:
            out.rejects.append(bad)
            continue
        base, quote = (rec.get("base") or "").strip().upper(), (rec.get("quote") or "").strip().upper()
        if not _rates.CURRENCY_RE.match(base) or not _rates.CURRENCY_RE.match(quote) or base == quote:
            out.rejects.append(Reject(line, "bad_currency", f"pair {base!r}->{quote!r} is not two ISO 4217 codes", "base",
                                      f"{base}/{quote}"))
            continue
        rate, bad = _rates.parse_rate(rec.get("rate") or "", line, "rate")
        if bad:
            out.rejects.append(bad)
            continue
        rows.append({"rate_date": day, "base": base, "quote": quote, "rate": str(rate),
                     "source": (rec.get("source") or "").strip() or path.name, "_source_line": line})
    kept, jumps = _rates.check_jumps(rows)
    out.rejects.extend(jumps)
    out.tables["fx_rates"] = _rates.table(kept)
    return out


FORMATS = [SourceFormat(FORMAT_NAME, "fx", detect, parse, "Exchange rates CSV (date, base, quote, rate)")]
