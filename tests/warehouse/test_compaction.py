"""The ledger's checkpoint compacts (DuckDB's vacuum) only when a table stores enough deleted rows
(warehouse/compaction.py): at least 20 % of its stored rows and at least one row group (122,880) of them.

Every case builds its table by hand, so the deleted rows are counted from the statements:
- 400,000 rows (rows 0..399,999); `i % 10 < 3` deletes 3 of every 10: 120,000 deleted. 120,000 < 122,880:
  not due although 30 % (a table's garbage under one row group is left);
- 500,000 rows; `i % 4 = 0` deletes 125,000 = 25 % and >= 122,880: due;
- 1,000,000 rows; `i % 10 = 0` deletes 100,000 = 10 %: not due. Its live sum of i: 0..999,999 sums to
  999,999 x 1,000,000 / 2 = 499,999,500,000, the deleted 0, 10, .., 999,990 to 10 x (99,999 x 100,000 / 2)
  = 49,999,500,000.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from warehouse import compaction


def _table(con: duckdb.DuckDBPyConnection, name: str, rows: int, delete_where: str) -> None:
    con.execute(f"create table {name} as select i, i * 2 as j, 'row ' || i as s from range({rows}) t(i)")
    con.execute("checkpoint")  # stored in row groups, as a built model is
    con.execute(f"delete from {name} where {delete_where}")


def _stored_deleted(con: duckdb.DuckDBPyConnection, name: str) -> int:
    stored = con.execute("select estimated_size from duckdb_tables() where table_name = ?", [name]).fetchone()[0]
    return stored - con.execute(f"select count(*) from {name}").fetchone()[0]


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    c = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    yield c
    c.close()


def test_deleted_rows_are_counted_per_table(con: duckdb.DuckDBPyConnection) -> None:
    _table(con, "small_share", 1_000_000, "i % 10 = 0")
    _table(con, "under_a_row_group", 400_000, "i % 10 < 3")
    con.execute("create schema marts")
    _table(con, 'marts."odd ""name"""', 10, "i < 4")  # quoted names are counted too
    con.execute("create table untouched as select 1 as a")
    found = {g.table: (g.deleted, g.stored) for g in compaction.garbage(con)}
    assert found == {"main.small_share": (100_000, 1_000_000), "main.under_a_row_group": (120_000, 400_000),
                     'marts.odd "name"': (4, 10)}
    assert [g.table for g in compaction.garbage(con)][0] == "main.under_a_row_group"  # most deleted first


def test_a_checkpoint_under_the_threshold_keeps_the_deleted_rows(con: duckdb.DuckDBPyConnection) -> None:
    _table(con, "small_share", 1_000_000, "i % 10 = 0")
    _table(con, "under_a_row_group", 400_000, "i % 10 < 3")
    # 100,000 deleted from the front (25 %, under one row group): DuckDB's vacuum, when on, drops all of them
    _table(con, "thinned", 400_000, "i < 100000")
    tasks, why = compaction.vacuum_decision(con, "auto")
    assert tasks == 0 and why.startswith("deferred: 320,000 deleted rows in 3 tables")
    assert "main.under_a_row_group (30.0% of 400,000)" in why
    compaction.checkpoint(con, "auto")
    # not compacted: every table still stores its deleted rows, and reads only the live ones
    assert _stored_deleted(con, "small_share") == 100_000
    assert _stored_deleted(con, "under_a_row_group") == 120_000
    assert _stored_deleted(con, "thinned") == 100_000
    assert con.execute("select count(*), sum(i) from small_share").fetchone() == (900_000, 499_999_500_000 - 49_999_500_000)


def test_a_table_at_the_threshold_compacts(con: duckdb.DuckDBPyConnection) -> None:
    _table(con, "due", 500_000, "i % 4 = 0")
    tasks, why = compaction.vacuum_decision(con, "auto")
    assert tasks == compaction.VACUUM_TASKS
    assert why == "compacting: 1 tables at or above 20% deleted rows, most main.due (125,000 of 500,000, 25.0%)"
    compaction.checkpoint(con, "auto")
    # DuckDB's vacuum merged the thinned row groups: most deleted rows are gone (which ones is its own
    # rule), where the same table checkpointed without it keeps all 125,000 (the next test's control)
    assert _stored_deleted(con, "due") < 125_000 // 10
    assert con.execute("select count(*) from due").fetchone()[0] == 375_000


def test_without_the_vacuum_the_same_table_keeps_its_deleted_rows(con: duckdb.DuckDBPyConnection) -> None:
    _table(con, "due", 500_000, "i % 4 = 0")
    con.execute("set max_vacuum_tasks = 0")
    con.execute("checkpoint")
    assert _stored_deleted(con, "due") == 125_000


def test_always_compacts_and_a_wrong_mode_is_refused(con: duckdb.DuckDBPyConnection,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _table(con, "due", 500_000, "i % 4 = 0")
    con.execute("delete from due where i < 200_000")  # 200,000 - 50,000 more: 275,000 of 500,000, still due
    monkeypatch.setenv(compaction.ENV, "always")
    assert compaction.vacuum_decision(con) == (compaction.VACUUM_TASKS, "GPU_LEDGER_VACUUM=always")
    monkeypatch.setenv(compaction.ENV, "auto")
    assert compaction.vacuum_decision(con)[1].endswith("most main.due (275,000 of 500,000, 55.0%)")
    monkeypatch.setenv(compaction.ENV, "always")
    compaction.checkpoint(con)
    assert _stored_deleted(con, "due") < 275_000 // 10
    monkeypatch.setenv(compaction.ENV, "sometimes")
    with pytest.raises(ValueError, match="GPU_LEDGER_VACUUM must be 'always' or 'auto', got 'sometimes'"):
        compaction.vacuum_decision(con)


def test_no_deleted_rows_is_said_so(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("create table t as select 1 as a")
    assert compaction.vacuum_decision(con, "auto") == (0, "no deleted rows stored")
