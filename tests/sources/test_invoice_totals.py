"""Invoice totals: a row the reconciliation cannot match is a reject with its line, not a load."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from sources.billing.invoice_totals import parse

HEADER = "InvoiceId,BillingAccountId,BillingPeriodStart,BillingCurrency,InvoiceTotal\n"


def test_rows_without_account_or_currency_are_rejected_and_the_rest_load(tmp_path: Path) -> None:
    # Lines: 2 good; 3 no account; 4 blank (spaces) currency; 5 good in lower-case currency.
    path = tmp_path / "invoice_totals.csv"
    path.write_text(HEADER + "INV-1,ACCT-1,2025-04-01,USD,10.50\n"
                    "INV-2,,2025-04-01,USD,3.00\n"
                    "INV-3,ACCT-1,2025-04-01,  ,4.00\n"
                    "INV-4,ACCT-2,2025-04-01,eur,7.25\n")
    out = parse(path)
    rejects = [(r.line, r.rule, r.column) for r in out.rejects]
    assert rejects == [(3, "missing_value", "BillingAccountId"), (4, "missing_value", "BillingCurrency")]
    rows = out.tables["billing_invoices"].to_pylist()
    assert [(r["_source_line"], r["BillingAccountId"], r["BillingCurrency"], r["InvoiceTotal"]) for r in rows] == [
        (2, "ACCT-1", "USD", Decimal("10.50")), (5, "ACCT-2", "EUR", Decimal("7.25"))]
