"""Invoice totals: the amount each invoice (or billing account and period) says is due.

The bill's line items must add up to the invoice. A delivery that lost lines, or a doctored
line, shows up as a mismatch that blocks the publication (see
dbt/tests/assert_ledger_matches_invoice_totals.sql). Format: CSV with the header
`InvoiceId,BillingAccountId,BillingPeriodStart,BillingCurrency,InvoiceTotal`.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text

# A row loads only with all four: account, currency, a date and a number.
_COMPLETE = ("BillingAccountId is not null and BillingCurrency is not null "
             "and BillingPeriodStart is not null and InvoiceTotal is not null")

HEADER = ["invoiceid", "billingaccountid", "billingperiodstart", "billingcurrency", "invoicetotal"]


def _detect(path: Path, head: bytes) -> bool:
    first = head_text(head).splitlines()[0] if head else ""
    return [c.strip().strip('"').lower() for c in first.split(",")] == HEADER


def parse(path: Path) -> ParseOutput:
    """Read invoice totals; a row without its account or currency, a total that is not a number or a
    bad period is a reject with its line."""
    con = duckdb.connect()
    try:
        try:
            con.execute(
                "create table inv as select row_number() over () + 1 as _source_line, * "
                "from read_csv(?, header=true, all_varchar=true)", [str(path)],
            )
        except duckdb.Error as exc:
            raise UnreadableFile(path, None, f"not an invoice totals CSV: {exc}") from exc
        con.execute("""
            create table typed as
            select _source_line, InvoiceId, nullif(trim(BillingAccountId), '') as BillingAccountId,
                   try_cast(BillingPeriodStart as timestamp) as BillingPeriodStart,
                   nullif(upper(trim(BillingCurrency)), '') as BillingCurrency,
                   try_cast(InvoiceTotal as decimal(38,12)) as InvoiceTotal,
                   BillingPeriodStart as raw_period, InvoiceTotal as raw_total
            from inv
        """)
        out = ParseOutput()
        # An invoice without its account or currency matches no ledger line: loaded, it would fail
        # the blocking reconciliation and withhold every source; so it is a reject with its line.
        for line, account, currency, period, total, raw_period, raw_total in con.execute(
            "select _source_line, BillingAccountId, BillingCurrency, BillingPeriodStart, InvoiceTotal, "
            f"raw_period, raw_total from typed where not ({_COMPLETE})"
        ).fetchall():
            if account is None:
                out.rejects.append(Reject(line, "missing_value", "BillingAccountId is empty", "BillingAccountId", None))
            elif currency is None:
                out.rejects.append(Reject(line, "missing_value", "BillingCurrency is empty", "BillingCurrency", None))
            elif total is None:
                out.rejects.append(Reject(line, "non_numeric", f"InvoiceTotal {raw_total!r} is not a number",
                                          "InvoiceTotal", raw_total))
            else:
                out.rejects.append(Reject(line, "invalid_timestamp", f"BillingPeriodStart {raw_period!r} is not a date",
                                          "BillingPeriodStart", raw_period))
        out.tables["billing_invoices"] = con.execute(
            f"select * exclude (raw_period, raw_total) from typed where {_COMPLETE}"
        ).to_arrow_table()
        return out
    finally:
        con.close()


FORMATS = [SourceFormat("invoice_totals_csv", "billing", _detect, parse, "Invoice totals per billing period")]
