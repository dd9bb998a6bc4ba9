"""The rows a warning dbt test found are kept as JSON text (pipelines/defs/transform/assets.py
`_stage_failing_rows`): every row up to the cap, amounts with every stored digit, times as written,
numbered in the order of their text whatever order the test returned them in, and a test whose SQL
DuckDB cannot run recorded without rows."""

from __future__ import annotations

import json
from decimal import Decimal

import duckdb
import pytest

from pipelines.defs.transform import assets
from pipelines.defs.transform.assets import STAGED_FAILURES, _stage_failing_rows


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create table bills (charge_key varchar, list_cost decimal(38, 12), contracted_cost decimal(38, 12), "
                "charged_at timestamp, note varchar)")
    con.execute("insert into bills values ('k1', 55.04, 58.992, '2025-10-01 13:00:00', null), "
                "('k2', 123456789012345.123456789012, 123456789012346, '2025-10-02 00:00:00', 'ok'), "
                "('k3', 10, 9, '2025-10-03 00:00:00', null)")
    con.execute(f"create temp table {STAGED_FAILURES} (check_name varchar, row_number bigint, failing_row varchar)")
    return con


def _staged(con: duckdb.DuckDBPyConnection) -> list[tuple[str, int, dict]]:
    return [(name, n, json.loads(text, parse_float=Decimal)) for name, n, text in
            con.execute(f"select * from {STAGED_FAILURES} order by check_name, row_number").fetchall()]


def test_every_row_is_kept_with_exact_amounts(con: duckdb.DuckDBPyConnection) -> None:
    _stage_failing_rows(con, "list_below_contracted", "select * from bills where list_cost < contracted_cost")
    staged = _staged(con)
    assert [(name, n) for name, n, _ in staged] == [("list_below_contracted", 1), ("list_below_contracted", 2)]
    rows = {row["charge_key"]: row for _, _, row in staged}
    # 55.04 and the 27-digit amount exactly as the DECIMAL(38,12) column holds them (a float would round the second)
    assert rows["k1"]["list_cost"] == Decimal("55.040000000000")
    assert rows["k2"]["list_cost"] == Decimal("123456789012345.123456789012")
    assert rows["k1"]["charged_at"] == "2025-10-01 13:00:00" and rows["k1"]["note"] is None


def test_at_most_the_cap(con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "FAILING_ROWS_KEPT", 2)
    _stage_failing_rows(con, "all_bills", "select * from bills")
    assert [n for _, n, _ in _staged(con)] == [1, 2]


def test_numbering_and_the_cap_follow_the_rows_text_not_the_querys_order(
        con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch) -> None:
    # The texts start {"charge_key":"k1"..., "k2"..., "k3"...}: k1 < k2 < k3, whatever the query's order.
    _stage_failing_rows(con, "all_desc", "select * from bills order by charge_key desc")
    assert [(n, row["charge_key"]) for _, n, row in _staged(con)] == [(1, "k1"), (2, "k2"), (3, "k3")]
    monkeypatch.setattr(assets, "FAILING_ROWS_KEPT", 2)
    _stage_failing_rows(con, "capped_desc", "select * from bills order by charge_key desc")
    assert [(n, row["charge_key"]) for name, n, row in _staged(con) if name == "capped_desc"] == [(1, "k1"), (2, "k2")]


def test_columns_of_one_name_are_both_kept(con: duckdb.DuckDBPyConnection) -> None:
    _stage_failing_rows(con, "twice", "select charge_key as k, note as k from bills where charge_key = 'k2'")
    assert _staged(con) == [("twice", 1, {"k": "k2", "k_1": "ok"})]


def test_sql_duckdb_cannot_run_keeps_no_rows(con: duckdb.DuckDBPyConnection) -> None:
    _stage_failing_rows(con, "other_engine", "select * from spark_catalog.marts.no_such_table")
    _stage_failing_rows(con, "no_sql", None)
    assert _staged(con) == []
