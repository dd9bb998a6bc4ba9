"""No money figure without its currency, on the sample warehouse: every mart column of the money type
(DECIMAL(38,12), the `money` macro) sits in a table with a currency column (currency, BillingCurrency,
reporting_currency, ...) or names its currency itself (..._usd_...). A figure summed over two currencies
would need a table without one; the converted marts carry the reporting currency beside the native one."""

from __future__ import annotations

from pathlib import Path

import duckdb


def test_every_money_column_has_its_currency(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(Path(sample_run["home"]) / "ledger.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "select table_name, list(column_name order by ordinal_position) filter (where data_type = 'DECIMAL(38,12)'), "
            "count(*) filter (where lower(column_name) like '%currency%') from information_schema.columns "
            "where table_schema = 'marts' group by table_name").fetchall()
    finally:
        con.close()
    money_tables = [(t, cols) for t, cols, _ in rows if cols]
    assert len(money_tables) > 30  # the check reads the real marts, not an empty schema
    bare = {t: [c for c in cols if "_usd" not in c.lower()] for t, cols, n in rows if cols and n == 0}
    assert not {t: c for t, c in bare.items() if c}, bare
