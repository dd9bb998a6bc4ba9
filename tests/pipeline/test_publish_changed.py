"""A publication after a refresh that rebuilt some marts rewrites only those (warehouse/publish.py).

A hand-made ledger with three marts is published in full, then the ledger changes (mart `b` rebuilt
with a new row, mart `a` edited without being rebuilt, mart `c` no longer built) and it is published
as a refresh of what `b`'s inputs affect: `a` is the copy already published, `b` the ledger's, `c`
gone; the checks of the run are listed with the previous outcome of a check that did not run again.
Over a few such nights the file does not grow: the replaced tables' blocks are reused.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb

from warehouse.audit import ensure_audit, record_check
from warehouse.publish import publish, sort_order


def _ledger(path: Path) -> None:
    con = duckdb.connect(str(path))
    try:
        ensure_audit(con)
        con.execute("create schema marts")
        con.execute("create table marts.a as select range as id, 'a' || range as label from range(3)")
        con.execute("create table marts.b as select range as id, range * 2 as amount from range(20000)")
        con.execute("create table marts.c as select 1 as id")
        record_check(con, "run-1", "suite_a", "a", "error", "pass", "ok")
        record_check(con, "run-1", "suite_b", "b", "error", "pass", "ok")
    finally:
        con.close()


def _tables(serving: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(serving), read_only=True)
    try:
        names = [r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()]
        return {n: con.execute(f'select * from "{n}" order by all').fetchall() for n in names}
    finally:
        con.close()


def test_only_the_rebuilt_marts_are_written_again(tmp_path: Path) -> None:
    ledger, serving = tmp_path / "ledger.duckdb", tmp_path / "serving.duckdb"
    _ledger(ledger)
    publish(ledger, serving, "run-1", datetime.now(UTC))
    con = duckdb.connect(str(ledger))
    try:
        con.execute("insert into marts.b values (20000, 40000)")
        con.execute("update marts.a set label = 'edited'")  # not rebuilt: the published copy stays
        con.execute("drop table marts.c")
        record_check(con, "run-2", "suite_b", "b", "error", "pass", "ok")
    finally:
        con.close()
    counts = publish(ledger, serving, "run-2", datetime.now(UTC), carry_checks=True, rebuilt={"b"})
    published = _tables(serving)
    assert counts["a"] == 3 and counts["b"] == 20001 and "c" not in counts
    assert published["a"] == [(0, "a0"), (1, "a1"), (2, "a2")]
    assert len(published["b"]) == 20001 and published["b"][-1] == (20000, 40000)
    assert "c" not in published
    # suite_a did not run in run-2: its outcome of run-1 is carried over beside run-2's suite_b
    assert [(r[0], r[3]) for r in published["check_results"]] == [("suite_a", "pass"), ("suite_b", "pass")]
    assert published["publication"][0][0] == "run-2"
    assert not list(tmp_path.glob(".serving.duckdb.*"))
    sizes = []
    for night in range(3, 8):
        con = duckdb.connect(str(ledger))
        try:
            con.execute("create or replace table marts.b as select range as id, range * 2 as amount "
                        f"from range({20000 + night})")
            record_check(con, f"run-{night}", "suite_b", "b", "error", "pass", "ok")
        finally:
            con.close()
        publish(ledger, serving, f"run-{night}", datetime.now(UTC), carry_checks=True, rebuilt={"b"})
        sizes.append(serving.stat().st_size)
    assert _tables(serving)["b"][-1] == (20006, 40012)
    assert max(sizes) == sizes[0], sizes  # the replaced tables' blocks are reused, night after night


def test_a_mart_keyed_by_its_first_column_is_sorted_by_it_and_in_order_by_all_order(tmp_path: Path) -> None:
    """`sort_order`: a first column that is unique and never NULL sorts alone (no later column could break a
    tie, so the rows come out as `order by all` puts them); a first column with a repeated value or a NULL
    sorts by every column. Each table is published and read back in stored order."""
    ledger, serving = tmp_path / "ledger.duckdb", tmp_path / "serving.duckdb"
    con = duckdb.connect(str(ledger))
    try:
        ensure_audit(con)
        con.execute("create schema marts")
        # keyed: ids 9..0 (unique), labels in the opposite order; stored descending
        con.execute("create table marts.keyed as select 9 - range as id, 'l' || range as label from range(10)")
        # repeated: id 1 twice, told apart only by the second column ('b' < 'c')
        con.execute("create table marts.repeated as select * from (values (2, 'a'), (1, 'c'), (1, 'b')) t(id, label)")
        # nulled: a NULL id sorts last under order by all (NULLS LAST), so the key test must refuse it
        con.execute("create table marts.nulled as select * from (values (null, 'z'), (2, 'y'), (1, 'x')) t(id, label)")
        assert sort_order(con, "marts.keyed") == '"id"'
        assert sort_order(con, "marts.repeated") == "all"
        assert sort_order(con, "marts.nulled") == "all"
    finally:
        con.close()
    publish(ledger, serving, "run-1", datetime.now(UTC))
    con = duckdb.connect(str(serving), read_only=True)
    try:
        stored = {t: con.execute(f"select * from {t}").fetchall() for t in ("keyed", "repeated", "nulled")}
    finally:
        con.close()
    assert stored["keyed"] == [(i, f"l{9 - i}") for i in range(10)]
    assert stored["repeated"] == [(1, "b"), (1, "c"), (2, "a")]
    assert stored["nulled"] == [(1, "x"), (2, "y"), (None, "z")]
