"""ensure_all_raw_tables reads the raw schema once (warehouse/raw.py): a table or view already as its
contract says costs no query, and what is not (a column an older contract lacked, a dropped table or
view) is still made as the contract says, keeping the rows that are there."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from warehouse.raw import LINEAGE_COLUMNS, contract_columns, contracts, ensure_all_raw_tables


class _Counting:
    """A connection that counts the statements sent through it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.statements = con, 0

    def execute(self, *args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        self.statements += 1
        return self.con.execute(*args, **kwargs)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute("select column_name from information_schema.columns where "
                                      "table_schema = 'raw' and table_name = ? order by ordinal_position",
                                      [table]).fetchall()]


def test_a_ledger_as_the_contracts_say_costs_two_statements(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    ensure_all_raw_tables(con)
    counting = _Counting(con)
    ensure_all_raw_tables(counting)  # type: ignore[arg-type]
    # one for the database file, one for the raw schema; none per table (27 contracted tables)
    assert len(contracts()) > 20
    assert counting.statements == 2


def test_an_older_table_gains_the_new_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    ensure_all_raw_tables(con)
    con.execute("insert into raw.fx_rates (rate_date, base, quote, rate, source) "
                "values (date '2026-01-02', 'EUR', 'USD', 1.035, 'ecb')")
    con.execute("alter table raw.fx_rates drop column source")  # a ledger from before the column
    ensure_all_raw_tables(con)
    # added at the end, after the lineage columns (alter table ... add column)
    assert _columns(con, "fx_rates") == [*(c for c in contract_columns("fx_rates") if c != "source"),
                                         *LINEAGE_COLUMNS, "source"]
    assert con.execute("select base, quote, rate, source from raw.fx_rates").fetchall() == [
        ("EUR", "USD", Decimal("1.035"), None)]


def test_a_dropped_table_and_view_come_back(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    ensure_all_raw_tables(con)
    con.execute("drop table raw.fx_rates")
    con.execute("drop view raw.gpu_samples")  # the Parquet-backed table (storage: parquet)
    ensure_all_raw_tables(con)
    assert _columns(con, "fx_rates") == [*contract_columns("fx_rates"), *LINEAGE_COLUMNS]
    assert _columns(con, "gpu_samples") == [*contract_columns("gpu_samples"), *LINEAGE_COLUMNS]
    assert con.execute("select count(*) from raw.gpu_samples").fetchone() == (0,)
