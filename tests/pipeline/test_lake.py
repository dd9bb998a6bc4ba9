"""The Parquet lake between DuckDB and another engine (warehouse/lake.py), and the marts comparison
(tests/compare.py) the Spark lane relies on. Fast: DuckDB only."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sources.common import ParseOutput
from sources.usage._shared import SAMPLE_COLUMNS, rows_to_table
from tests.compare import compare_marts
from warehouse.audit import ensure_audit
from warehouse.lake import SCHEMA_FILE, export_sources, import_tables
from warehouse.raw import ensure_all_raw_tables, replace_file


def _ledger(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("create schema raw; create schema audit; create schema marts")
    con.execute("create table raw.things (id varchar, payload json, seen_at timestamp, amount decimal(38,12), "
                "tags varchar[])")
    con.execute("""insert into raw.things values
        ('a', '{"team": "ml"}', '2025-04-01 10:00:00', 12.290000000001, ['x', 'y']),
        ('b', null, null, null, null)""")
    con.execute("create table audit.file_loads (file_hash varchar, rows_loaded bigint)")
    con.execute("create table raw.empty_family (id varchar)")  # a family with no files yet
    con.close()
    return path


def test_export_writes_every_raw_and_audit_table_in_portable_types(tmp_path: Path) -> None:
    db = _ledger(tmp_path / "ledger.duckdb")
    done = export_sources(db, tmp_path / "lake")
    # Tables that do not say which landed file a row came from are written whole.
    assert done.rows == {"audit.file_loads": 0, "raw.empty_family": 0, "raw.things": 2}
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    types = {r[0]: r[1] for r in con.execute(
        f"describe select * from read_parquet('{tmp_path}/lake/raw/things/*.parquet')").fetchall()}
    # JSON travels as text, naive UTC timestamps as UTC instants, money stays exact.
    assert types["payload"] == "VARCHAR"
    assert types["seen_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["amount"] == "DECIMAL(38,12)"
    row = con.execute(f"select payload, cast(seen_at as timestamp), amount, tags from "
                      f"read_parquet('{tmp_path}/lake/raw/things/*.parquet') where id = 'a'").fetchone()
    assert row[0] == '{"team": "ml"}'
    assert str(row[1]) == "2025-04-01 10:00:00"
    assert row[2] == Decimal("12.290000000001")
    assert row[3] == ["x", "y"]
    # An empty table still has a file with its schema (another engine can declare the source).
    assert con.execute(f"select count(*) from read_parquet('{tmp_path}/lake/raw/empty_family/*.parquet')").fetchone()[0] == 0


def test_export_drops_what_the_ledger_no_longer_has(tmp_path: Path) -> None:
    db = _ledger(tmp_path / "ledger.duckdb")
    export_sources(db, tmp_path / "lake")
    con = duckdb.connect(str(db))
    con.execute("drop table raw.empty_family")
    con.execute("delete from raw.things where id = 'b'")
    con.close()
    done = export_sources(db, tmp_path / "lake")
    assert done.rows["raw.things"] == 1
    assert not (tmp_path / "lake" / "raw" / "empty_family").exists()  # no stale table left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lake", "ledger.duckdb"]
    hidden = [p for p in (tmp_path / "lake").rglob(".*")]
    assert hidden == []  # no temporary file left behind


HASH_A, HASH_B, HASH_C = "a" * 64, "b" * 64, "c" * 64


def _land(con: duckdb.DuckDBPyConnection, file_hash: str, loaded_at: str, *powers: float) -> None:
    """One landed file as the loader leaves it: its rows replaced in raw (here gpu_samples, a
    Parquet-backed table, and a DuckDB one), then its audit row with the load time."""
    samples = [{"sampled_at": datetime(2026, 1, 1) + timedelta(minutes=i), "host": "n1", "gpu_uuid": "GPU-1",
                "gpu_index": "0", "power_w": w, "source_format": "dcgm_csv", "_source_line": i + 2}
               for i, w in enumerate(powers)]
    replace_file(con, ParseOutput(tables={"gpu_samples": rows_to_table(samples, SAMPLE_COLUMNS)}),
                 file_hash=file_hash, source_file=f"{file_hash[0]}.csv", fmt="dcgm_csv", family="usage")
    con.execute("delete from raw.notes where _file_hash = ?", [file_hash])
    con.execute("insert into raw.notes values (?, ?, ?)", [f"note {file_hash[0]}", file_hash, loaded_at])
    con.execute("delete from audit.file_loads where file_hash = ?", [file_hash])
    con.execute("insert into audit.file_loads (file_hash, family, status, rows_loaded, loaded_at) "
                "values (?, 'usage', 'loaded', ?, ?)", [file_hash, len(powers), loaded_at])


def _parts(lake: Path, table: str) -> dict[str, int]:
    """File name -> inode of a table's Parquet files (a rewritten file is a new inode)."""
    return {p.name: p.stat().st_ino for p in sorted((lake / "raw" / table).glob("*.parquet"))}


def _lake_rows(lake: Path, table: str, cols: str) -> list[tuple]:
    return duckdb.sql(f"select {cols} from read_parquet('{lake}/raw/{table}/*.parquet') order by all").fetchall()


def test_export_writes_only_the_files_loaded_since_the_last_one(tmp_path: Path) -> None:
    db, lake = tmp_path / "ledger.duckdb", tmp_path / "lake"
    con = duckdb.connect(str(db))
    ensure_audit(con)
    ensure_all_raw_tables(con)
    con.execute("create table raw.notes (note varchar, _file_hash varchar, _loaded_at timestamp)")
    _land(con, HASH_A, "2026-01-02 01:00:00", 100, 200)
    _land(con, HASH_B, "2026-01-02 01:00:01", 300)
    con.close()
    first = export_sources(db, lake)
    assert first.written["raw.gpu_samples"] == [SCHEMA_FILE, f"{HASH_A}.parquet", f"{HASH_B}.parquet"]
    assert first.rows["raw.gpu_samples"] == 3 and first.rows["raw.notes"] == 2
    before = _parts(lake, "gpu_samples")

    # The next night lands one file: exactly one new Parquet file per raw table it touched.
    con = duckdb.connect(str(db))
    _land(con, HASH_C, "2026-01-03 01:00:00", 400, 500)
    con.close()
    second = export_sources(db, lake)
    raw_written = {k: v for k, v in second.written.items() if k.startswith("raw.")}
    assert raw_written == {"raw.gpu_samples": [f"{HASH_C}.parquet"], "raw.notes": [f"{HASH_C}.parquet"]}
    assert second.removed == {}
    after = _parts(lake, "gpu_samples")
    assert {k: after[k] for k in before} == before  # the earlier files were not rewritten
    assert _lake_rows(lake, "gpu_samples", "power_w") == [(100.0,), (200.0,), (300.0,), (400.0,), (500.0,)]

    # Nothing new: nothing raw is written (the audit bookkeeping is rewritten whole, a few rows).
    assert not [k for k in export_sources(db, lake).written if k.startswith("raw.")]

    # File A loaded again with other rows (its rows replaced by file hash, a new load time): its export
    # is replaced, the old rows are gone from the lake; file B forgotten: its export is removed.
    con = duckdb.connect(str(db))
    _land(con, HASH_A, "2026-01-04 01:00:00", 150)
    replace_file(con, ParseOutput(tables={}), file_hash=HASH_B, source_file="b.csv", fmt="dcgm_csv", family="usage")
    con.execute("delete from raw.notes where _file_hash = ?", [HASH_B])
    con.execute("delete from audit.file_loads where file_hash = ?", [HASH_B])
    con.close()
    third = export_sources(db, lake)
    assert third.written["raw.gpu_samples"] == [f"{HASH_A}.parquet"]
    assert third.removed["raw.gpu_samples"] == [f"{HASH_B}.parquet"]
    assert list(_parts(lake, "gpu_samples")) == [f"{HASH_A}.parquet", f"{HASH_C}.parquet", SCHEMA_FILE]
    assert _lake_rows(lake, "gpu_samples", "power_w") == [(150.0,), (400.0,), (500.0,)]
    assert _lake_rows(lake, "notes", "note") == [("note a",), ("note c",)]
    # The lake holds exactly the ledger's rows.
    con = duckdb.connect(str(db), read_only=True)
    ledger_rows = con.execute("select _file_hash, _source_line, power_w from raw.gpu_samples order by all").fetchall()
    con.close()
    assert _lake_rows(lake, "gpu_samples", "_file_hash, _source_line, power_w") == ledger_rows


def _spark_like_warehouse(root: Path) -> Path:
    """Parquet laid out the way Spark writes a managed table: <schema>.db/<table>/part-*.parquet."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    (root / "marts.db" / "fct_x").mkdir(parents=True)
    con.execute(f"copy (select 'a' as k, timestamptz '2025-04-01 10:00:00+00' as at, 1.005::decimal(38,12) as cost) "
                f"to '{root}/marts.db/fct_x/part-00000.parquet' (format parquet)")
    (root / "marts.db" / "_not_a_table").mkdir()
    return root


def test_import_replaces_the_marts_schema_with_naive_utc_timestamps(tmp_path: Path) -> None:
    db = _ledger(tmp_path / "ledger.duckdb")
    con = duckdb.connect(str(db))
    con.execute("create table marts.stale as select 1 as x")
    con.close()
    counts = import_tables(_spark_like_warehouse(tmp_path / "wh"), db)
    assert counts == {"fct_x": 1}
    con = duckdb.connect(str(db), read_only=True)
    tables = [r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'marts'").fetchall()]
    row = con.execute('select k, "at", typeof("at"), cost from marts.fct_x').fetchone()
    con.close()
    assert tables == ["fct_x"]
    assert (row[0], str(row[1]), row[2], row[3]) == ("a", "2025-04-01 10:00:00", "TIMESTAMP", Decimal("1.005"))


def test_import_without_a_build_fails_and_keeps_the_marts(tmp_path: Path) -> None:
    db = _ledger(tmp_path / "ledger.duckdb")
    con = duckdb.connect(str(db))
    con.execute("create table marts.kept as select 1 as x")
    con.close()
    with pytest.raises(FileNotFoundError):
        import_tables(tmp_path / "nowhere", db)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select x from marts.kept").fetchone() == (1,)
    con.close()


def _marts(path: Path, rows: list[tuple]) -> Path:
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    con.execute("create table marts.fct (team varchar, cost decimal(38,12), share double, n bigint)")
    con.executemany("insert into marts.fct values (?, ?, ?, ?)", rows)
    con.close()
    return path


def test_compare_is_exact_to_the_cent_and_tolerant_below_it(tmp_path: Path) -> None:
    base = [("ml", Decimal("10.004"), 0.1 + 0.2, 3), ("ops", Decimal("2.5"), 1.0, 1)]
    expected = _marts(tmp_path / "e.duckdb", base)
    # Same cents, float noise in the last bits, other row order: equal.
    same = _marts(tmp_path / "s.duckdb", [("ops", Decimal("2.500000000001"), 1.0, 1), ("ml", Decimal("10.001"), 0.3, 3)])
    assert all(d.equal for d in compare_marts(expected, same))
    # A cent apart: different, and the differing rows are named.
    cent = _marts(tmp_path / "c.duckdb", [("ml", Decimal("10.014"), 0.3, 3), ("ops", Decimal("2.5"), 1.0, 1)])
    diff = compare_marts(expected, cent)[0]
    assert not diff.equal and diff.first_differences
    # Floats either side of a rounding boundary (44.19140625 +- noise) are the same number.
    halves = _marts(tmp_path / "h.duckdb", [("ml", Decimal("10.004"), 0.30000000000000004, 3), ("ops", Decimal("2.5"), 1.0, 1)])
    assert all(d.equal for d in compare_marts(expected, halves))
    boundary_a = _marts(tmp_path / "ba.duckdb", [("ml", Decimal(1), 44.19140625000001, 1)])
    boundary_b = _marts(tmp_path / "bb.duckdb", [("ml", Decimal(1), 44.19140624999999, 1)])
    assert all(d.equal for d in compare_marts(boundary_a, boundary_b))
    # ... but a real difference in a float is one.
    off = _marts(tmp_path / "o.duckdb", [("ml", Decimal(1), 44.1915, 1)])
    assert not compare_marts(boundary_a, off)[0].equal
    # A row missing: different.
    fewer = _marts(tmp_path / "f.duckdb", base[:1])
    assert compare_marts(expected, fewer)[0].row_counts == (2, 1)
