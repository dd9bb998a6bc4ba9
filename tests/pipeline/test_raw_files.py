"""raw.gpu_samples kept as Parquet files beside the ledger (warehouse/raw_files.py): the guarantees
of a DuckDB table (replace per landed file, nothing half-written, nothing from another ledger)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from sources.common import ParseOutput, StreamEnd
from sources.usage._shared import SAMPLE_COLUMNS, rows_to_table
from warehouse.lake import export_sources
from warehouse.raw import (
    LINEAGE_COLUMNS,
    contract_columns,
    ensure_all_raw_tables,
    replace_file,
    replace_file_batches,
)

HASH_A, HASH_B = "a" * 64, "b" * 64


def _samples(*powers: float) -> pa.Table:
    rows = [{"sampled_at": datetime(2026, 1, 1) + timedelta(minutes=i), "host": "n1", "gpu_uuid": "GPU-1", "gpu_index": "0",
             "power_w": w, "source_format": "dcgm_csv", "_source_line": i + 2} for i, w in enumerate(powers)]
    return rows_to_table(rows, SAMPLE_COLUMNS)


def _load(con: duckdb.DuckDBPyConnection, file_hash: str, *powers: float) -> int:
    return replace_file(con, ParseOutput(tables={"gpu_samples": _samples(*powers)}), file_hash=file_hash,
                        source_file=f"{file_hash[0]}.csv", fmt="dcgm_csv", family="usage")


def _rows(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("select _file_hash[1], _source_file, _source_line, power_w from raw.gpu_samples "
                       "order by 1, 3").fetchall()


def _files(db: Path) -> list[str]:
    return sorted(p.name for p in (db.with_suffix(".raw") / "gpu_samples").iterdir())


def test_replace_per_landed_file(tmp_path: Path) -> None:
    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    assert _load(con, HASH_A, 100, 200) == 2
    assert _load(con, HASH_B, 300) == 1
    assert _load(con, HASH_A, 150) == 1  # a reload replaces A's rows, B's stay
    assert _rows(con) == [("a", "a.csv", 2, 150.0), ("b", "b.csv", 2, 300.0)]
    assert _files(db) == ["_empty.parquet", f"{HASH_A}.parquet", f"{HASH_B}.parquet"]
    assert replace_file(con, ParseOutput(tables={}), file_hash=HASH_B, source_file="b.csv", fmt="dcgm_csv",
                        family="usage") == 0  # a reload with no samples removes them
    assert _rows(con) == [("a", "a.csv", 2, 150.0)]
    assert _files(db) == ["_empty.parquet", f"{HASH_A}.parquet"]


def test_parts_keep_the_statistics_scans_prune_on(tmp_path: Path) -> None:
    """A day's scan prunes row groups on sampled_at and a file's on _file_hash (dbt's incremental days);
    those keep min/max. Strings do not (computing them was most of the cost of statistics), and the
    line number, always distinct, is written plain rather than as a dictionary that never pays."""
    import pyarrow.parquet as pq

    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    _load(con, HASH_A, 100, 200, 300)
    meta = pq.ParquetFile(db.with_suffix(".raw") / "gpu_samples" / f"{HASH_A}.parquet").metadata.row_group(0)
    columns = {meta.column(i).path_in_schema: meta.column(i) for i in range(meta.num_columns)}
    for name in ("sampled_at", "_file_hash", "_loaded_at", "power_w", "_source_line"):
        assert columns[name].statistics is not None and columns[name].statistics.has_min_max, name
    assert columns["sampled_at"].statistics.min == datetime(2026, 1, 1)
    for name in ("host", "gpu_uuid", "source_format"):
        assert columns[name].statistics is None or not columns[name].statistics.has_min_max, name
    for name in ("_source_line", "power_w"):
        assert "RLE_DICTIONARY" not in columns[name].encodings and "PLAIN_DICTIONARY" not in columns[name].encodings
    assert "RLE_DICTIONARY" in columns["gpu_uuid"].encodings  # repeated labels keep their dictionary
    assert _rows(con) == [("a", "a.csv", 2, 100.0), ("a", "a.csv", 3, 200.0), ("a", "a.csv", 4, 300.0)]


def test_view_has_the_contract_types(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    ensure_all_raw_tables(con)
    got = dict(con.execute("select column_name, data_type from information_schema.columns "
                           "where table_schema = 'raw' and table_name = 'gpu_samples' order by ordinal_position")
               .fetchall())
    assert got == {**contract_columns("gpu_samples"), **LINEAGE_COLUMNS}
    assert con.execute("select count(*) from raw.gpu_samples").fetchone() == (0,)


class _Broken:
    """A batched parse whose second batch fails (a file that turns unreadable half-way)."""

    table = "gpu_samples"

    def batches(self) -> Iterator[pa.Table]:
        yield _samples(1, 2, 3)
        raise OSError("disk went away")

    def finish(self) -> StreamEnd:  # pragma: no cover - never reached
        return StreamEnd()


def test_failed_load_keeps_the_old_rows(tmp_path: Path) -> None:
    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    _load(con, HASH_A, 100)
    with pytest.raises(OSError, match="disk went away"):
        replace_file_batches(con, _Broken(), file_hash=HASH_A, source_file="a.csv", fmt="dcgm_csv", family="usage")
    assert _rows(con) == [("a", "a.csv", 2, 100.0)]
    assert _files(db) == ["_empty.parquet", f"{HASH_A}.parquet"]  # no temporary file left


def test_killed_load_leftovers_are_removed(tmp_path: Path) -> None:
    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    _load(con, HASH_A, 100)
    leftover = db.with_suffix(".raw") / "gpu_samples" / f"{HASH_B}.parquet.tmp-99999"
    leftover.write_bytes(b"half a parquet file")
    assert _rows(con) == [("a", "a.csv", 2, 100.0)]  # never read by the view
    ensure_all_raw_tables(con)
    assert not leftover.exists()


def test_new_ledger_does_not_see_a_deleted_ledgers_files(tmp_path: Path) -> None:
    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    _load(con, HASH_A, 100)
    con.close()
    db.unlink()  # the user deletes the ledger file, its folder stays
    con = duckdb.connect(str(db))
    ensure_all_raw_tables(con)
    assert _rows(con) == []
    assert _files(db) == ["_empty.parquet"]


def test_moved_ledger_reads_its_own_folder(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    con = duckdb.connect(str(tmp_path / "old" / "ledger.duckdb"))
    _load(con, HASH_A, 100)
    con.close()
    shutil.copytree(tmp_path / "old", tmp_path / "new")
    shutil.rmtree(tmp_path / "old")
    con = duckdb.connect(str(tmp_path / "new" / "ledger.duckdb"))
    ensure_all_raw_tables(con)
    assert _rows(con) == [("a", "a.csv", 2, 100.0)]


def test_older_ledgers_table_moves_into_files(tmp_path: Path) -> None:
    """A ledger built before the files: its DuckDB table becomes one file per landed file."""
    db = tmp_path / "ledger.duckdb"
    mem = duckdb.connect()
    _load(mem, HASH_A, 100, 200)
    _load(mem, HASH_B, 300)
    mem.execute(f"attach '{db}' as old")
    mem.execute("create schema old.raw")
    mem.execute("create table old.raw.gpu_samples as select * from raw.gpu_samples")
    mem.close()
    con = duckdb.connect(str(db))
    ensure_all_raw_tables(con)
    assert _rows(con) == [("a", "a.csv", 2, 100.0), ("a", "a.csv", 3, 200.0), ("b", "b.csv", 2, 300.0)]
    assert _files(db) == ["_empty.parquet", f"{HASH_A}.parquet", f"{HASH_B}.parquet"]
    assert con.execute("select table_type from information_schema.tables where table_name = 'gpu_samples'"
                       ).fetchall() == [("VIEW",)]


def test_lake_export_includes_the_file_table(tmp_path: Path) -> None:
    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    _load(con, HASH_A, 100, 200)
    con.close()
    done = export_sources(db, tmp_path / "lake")
    assert done.rows["raw.gpu_samples"] == 2
    assert duckdb.sql(f"select count(*) from '{tmp_path / 'lake' / 'raw' / 'gpu_samples'}/*.parquet'").fetchone() == (2,)


def test_gx_samples_the_view_and_finds_a_single_bad_row(tmp_path: Path) -> None:
    """The GX reader on a file-stored table (no rowid): a bounded sample plus every suspect row,
    the same sample twice, and one negative power in 3,000 rows fails the suite."""
    from warehouse.expectations.dsl import Suite, non_negative
    from warehouse.expectations.runner import read_frame, validate

    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    _load(con, HASH_A, *range(1_500))
    _load(con, HASH_B, *range(1_499), -5)
    suite = Suite("gpu_samples", non_negative("power_w"), schema="raw", sample_rows=100)
    first, meta = read_frame(con, suite)
    second, _ = read_frame(con, suite)
    assert meta["rows"] == 3_000 and len(first) == 101  # 100 sampled + the bad row
    assert first.equals(second)
    passed, failures = validate(suite, first)
    assert not passed and "unexpected" in failures[0]


def test_a_deleted_folder_is_loaded_again_not_lost(tmp_path: Path) -> None:
    """The Parquet folder deleted under a ledger that still has its audit rows: the next ingest loads
    the landed usage files again instead of leaving raw.gpu_samples quietly empty."""
    from warehouse.ingest import ingest_family
    from warehouse.landing import land_inputs

    usage = tmp_path / "inputs" / "usage"
    usage.mkdir(parents=True)
    (usage / "dcgm.csv").write_text("timestamp,hostname,gpu,uuid,DCGM_FI_DEV_POWER_USAGE\n"
                                    "2026-01-01T00:00:00Z,n1,0,GPU-1,100\n2026-01-01T00:01:00Z,n1,0,GPU-1,110\n")
    land_inputs(tmp_path / "inputs", tmp_path / "landing", ("usage",))
    db = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(db))
    assert ingest_family(con, "usage", tmp_path / "landing", "run-1").rows_loaded == 2
    assert ingest_family(con, "usage", tmp_path / "landing", "run-2").files_seen == 0  # nothing new
    shutil.rmtree(db.with_suffix(".raw"))
    again = ingest_family(con, "usage", tmp_path / "landing", "run-3")
    assert (again.files_loaded, again.rows_loaded) == (1, 2)
    assert con.execute("select count(*), sum(power_w) from raw.gpu_samples").fetchone() == (2, 210.0)
    assert con.execute("select run_id from audit.file_loads").fetchall() == [("run-3",)]
