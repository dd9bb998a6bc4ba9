"""dcgm_csv in bounded batches: the batched parse and the batched raw load give exactly the
rows, lines and rejects of the whole-file parse, whatever the batch size."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest

from sources.common import collect
from sources.usage import dcgm_csv
from warehouse.ingest import ingest_family
from warehouse.landing import land_inputs
from warehouse.raw import replace_file_batches

HEADER = ["timestamp", "hostname", "gpu", "uuid", "modelName", "GPU_I_PROFILE", "GPU_I_ID", "namespace", "pod",
          "container", "job_id", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
          "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_MEMORY_TEMP"]
BASE = ["h1", "0", "GPU-a", "NVIDIA A100-SXM4-80GB", "", "", "ns", "p1", "c", "42"]
OTHER = ["h1", "1", "GPU-b", "NVIDIA A100-SXM4-80GB", "", "", "ns", "p2", "c", "43"]


def _write(path: Path) -> Path:
    """Two GPUs; line 3 non-numeric, line 6 repeats line 5 (duplicate), line 8 has no parseable
    time ('yesterday' reads as NULL), line 9 is short (reader reject), line 11 repeats line 4."""
    rows = [
        ["2026-01-01T00:00:00Z", *BASE, "10", "100", "900", "5000", "40"],     # 2 kept
        ["2026-01-01T00:01:00Z", *BASE, "abc", "100", "900", "6000", "40"],    # 3 non_numeric
        ["2026-01-01T00:00:00Z", *OTHER, "20", "100", "900", "7000", "40"],    # 4 kept
        ["2026-01-01T00:02:00Z", *BASE, "30", "100", "900", "6100", "41"],     # 5 kept
        ["2026-01-01T00:02:00Z", *BASE, "30", "100", "900", "6100", "41"],     # 6 duplicate of 5
        ["2026-01-01T00:01:00Z", *OTHER, "25", "100", "900", "7100", "40"],    # 7 kept
        ["yesterday", *BASE, "30", "100", "900", "6200", "41"],                # 8 invalid_timestamp
        ["2026-01-01T00:03:00Z", "h1", "0"],                                   # 9 wrong_field_count
        ["2026-01-01T00:03:00Z", *BASE, "35", "100", "900", "6300", "42"],     # 10 kept
        ["2026-01-01T00:00:00Z", *OTHER, "20", "100", "900", "7000", "40"],    # 11 duplicate of 4 (out of order)
        ["2026-01-01T00:02:00Z", *OTHER, "26", "100", "900", "7200", "40"],    # 12 kept
    ]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


KEPT_LINES = [2, 4, 5, 7, 10, 12]
REJECTS = [(3, "non_numeric"), (8, "invalid_timestamp"), (9, "wrong_field_count")]


@pytest.mark.parametrize("batch_rows", [1, 2, 3, 1000])
def test_batched_parse_equals_whole_file(tmp_path: Path, batch_rows: int) -> None:
    f = _write(tmp_path / "d.csv")
    out = collect(dcgm_csv.stream(f, batch_rows=batch_rows))
    rows = out.tables["gpu_samples"].to_pylist()
    assert [r["_source_line"] for r in rows] == KEPT_LINES
    assert [(r.line, r.rule) for r in out.rejects] == REJECTS
    assert [r["energy_mj"] for r in rows] == [5000, 7000, 6100, 7100, 6300, 7200]
    assert [r["fb_total_mib"] for r in rows] == [1000.0] * 6
    text = " | ".join(out.warnings)
    assert "2 duplicated sample" in text and "out of order" in text
    assert dcgm_csv.parse(f).tables["gpu_samples"].equals(out.tables["gpu_samples"])


def test_batches_are_bounded(tmp_path: Path) -> None:
    from tools.generate.bulk_dcgm import generate

    f = tmp_path / "gen.csv"
    n = generate(f, gpus=3, days=1, seed=7)
    parsed = dcgm_csv.stream(f, batch_rows=1000)
    sizes = [b.num_rows for b in parsed.batches()]
    parsed.finish()
    assert sum(sizes) == n == 4320 and max(sizes) <= 1000 and len(sizes) >= 5


@pytest.mark.parametrize("storage", ["table", "parquet"])
@pytest.mark.parametrize("batch_rows", [2, 1000])
def test_batched_load_applies_corrections(tmp_path: Path, batch_rows: int, storage: str) -> None:
    """Duplicates deleted and lines moved past the reader's rejects inside the load's transaction,
    in a DuckDB table (in-memory ledger) and in the Parquet files of a ledger file."""
    f = _write(tmp_path / "d.csv")
    con = duckdb.connect(str(tmp_path / "ledger.duckdb")) if storage == "parquet" else duckdb.connect()
    for _ in range(2):  # a reload replaces the file's rows
        rows, end = replace_file_batches(con, dcgm_csv.stream(f, batch_rows=batch_rows), file_hash="h" * 64,
                                         source_file="d.csv", fmt="dcgm_csv", family="usage")
    got = con.execute("select _source_line, energy_mj, _source_file from raw.gpu_samples order by 1").fetchall()
    assert rows == 6
    assert got == [(2, 5000, "d.csv"), (4, 7000, "d.csv"), (5, 6100, "d.csv"), (7, 7100, "d.csv"),
                   (10, 6300, "d.csv"), (12, 7200, "d.csv")]
    assert [(r.line, r.rule) for r in end.rejects] == REJECTS
    kind = con.execute("select table_type from information_schema.tables where table_name = 'gpu_samples'").fetchone()
    assert kind == (("VIEW",) if storage == "parquet" else ("BASE TABLE",))
    if storage == "parquet":  # one file for the landed file, however often it was loaded
        assert sorted(p.name for p in (tmp_path / "ledger.raw" / "gpu_samples").iterdir()) == [
            "_empty.parquet", "h" * 64 + ".parquet"]


def test_ingest_quarantines_batched_rejects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the pipeline's loader (batches of 2): good rows kept, bad rows quarantined with file and line."""
    monkeypatch.setattr(dcgm_csv.stream, "__defaults__", (2,))  # the loader calls stream(path)
    (tmp_path / "inputs" / "usage").mkdir(parents=True)
    _write(tmp_path / "inputs" / "usage" / "dcgm_day.csv")
    land_inputs(tmp_path / "inputs", tmp_path / "landing", ("usage",))
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    summary = ingest_family(con, "usage", tmp_path / "landing", "run-1")
    assert (summary.files_loaded, summary.rows_loaded, summary.rejects) == (1, 6, 3)
    assert con.execute("select file_name, line, rule from audit.dq_rejects order by line").fetchall() == [
        ("dcgm_day.csv", 3, "non_numeric"), ("dcgm_day.csv", 8, "invalid_timestamp"),
        ("dcgm_day.csv", 9, "wrong_field_count")]
    assert con.execute("select list(_source_line order by _source_line) from raw.gpu_samples").fetchone()[0] == KEPT_LINES
    status, rows, message = con.execute("select status, rows_loaded, message from audit.file_loads").fetchone()
    assert (status, rows) == ("loaded", 6) and "duplicated sample" in message


def _usage_folder(root: Path, files: dict[str, str | None]) -> Path:
    """inputs/usage with one copy of the corrections file per name (None) or the given text."""
    usage = root / "inputs" / "usage"
    usage.mkdir(parents=True)
    for i, (name, text) in enumerate(files.items()):
        if text is None:
            _write(usage / name)
            with open(usage / name, "a") as fh:  # a distinct file (hash) per name, same rows otherwise
                fh.write(f"2026-01-02T00:00:0{i}Z,h{i},0,GPU-z{i},x,,,,,,,1,1,1,1,1\r\n")  # \r\n as csv.writer wrote the rest
        else:
            (usage / name).write_text(text)
    land_inputs(root / "inputs", root / "landing", ("usage",))
    return root / "landing"


def _ingest(root: Path, ahead: int, monkeypatch: pytest.MonkeyPatch) -> tuple[duckdb.DuckDBPyConnection, object]:
    import warehouse.ingest as ingest

    monkeypatch.setattr(ingest, "PREPARE_AHEAD", ahead)
    con = duckdb.connect(str(root / "ledger.duckdb"))
    return con, ingest.ingest_family(con, "usage", root / "landing", "run-1")


def test_files_prepared_ahead_load_exactly_as_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsed and written in worker threads (PREPARE_AHEAD = 2) or one after another in the loader
    (0): the same raw rows, line numbers, audit rows and quarantined lines. Four files, each with the
    corrections file's 6 kept rows + 1 appended row and its 3 rejects: 4 x 7 = 28 rows, 4 x 3 = 12 rejects."""
    import threading

    import warehouse.ingest as ingest

    names = {f"dcgm_{d}.csv": None for d in ("a", "b", "c", "d")}
    real, threads = ingest._prepare, []

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(ingest, "_prepare", counted)
    got = {}
    for ahead in (0, 2):
        root = tmp_path / f"ahead{ahead}"
        _usage_folder(root, names)
        threads.clear()
        started = duckdb.connect().execute("select current_timestamp::timestamp").fetchone()[0]
        con, summary = _ingest(root, ahead, monkeypatch)
        # every file prepared in a worker thread, or none
        assert len(threads) == (4 if ahead else 0) and all(t.startswith("gpu-ledger-prepare") for t in threads)
        # Each row's _loaded_at is taken during this ingest and not after its file's audit row: the
        # incremental telemetry model finds new rows by it (int_gpu_telemetry_hourly).
        stamps = con.execute(
            "select count(*), count(*) filter (where s._loaded_at >= ? and s._loaded_at <= a.loaded_at) "
            "from raw.gpu_samples as s join audit.file_loads as a on a.file_hash = s._file_hash",
            [started]).fetchone()
        assert stamps == (28, 28), stamps
        got[ahead] = (
            con.execute("select * exclude (_loaded_at) from raw.gpu_samples order by all").fetchall(),
            con.execute("select file_hash, format, source_file, rows_loaded, rejects, status, message "
                        "from audit.file_loads order by all").fetchall(),
            # first_seen is the landing time of each root's own copy: it may differ by a second
            con.execute("select * exclude (run_id, first_seen) from audit.dq_rejects order by all").fetchall(),
            (summary.files_loaded, summary.rows_loaded, summary.rejects))
        con.close()
        leftovers = [p.name for p in (root / "ledger.raw" / "gpu_samples").iterdir() if ".tmp-" in p.name]
        assert leftovers == []
    assert got[2][3] == (4, 28, 12)
    assert len(got[2][0]) == 28 and len(got[2][2]) == 12
    assert got[2] == got[0]


def test_a_file_failing_in_a_worker_is_quarantined_and_the_others_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose read fails in its worker thread: recorded as unreadable with its name, nothing of it
    stored, no temporary file left; the files before and after it load (7 rows each)."""
    _usage_folder(tmp_path, {"dcgm_a.csv": None, "dcgm_b.csv": None, "dcgm_c.csv": None})
    real = dcgm_csv._DcgmBatches.batches

    def failing(self):  # noqa: ANN001, ANN202 - the parser's own method, patched
        if "GPU-z1," in self.path.read_text():
            raise dcgm_csv.UnreadableFile(self.path, None, "cannot read as CSV: disk went away")
        yield from real(self)

    monkeypatch.setattr(dcgm_csv._DcgmBatches, "batches", failing)
    con, summary = _ingest(tmp_path, 2, monkeypatch)
    assert (summary.files_loaded, summary.rows_loaded) == (2, 14)
    assert summary.problems == ["dcgm_b.csv: cannot read as CSV: disk went away"]
    assert con.execute("select source_file, status from audit.file_loads order by 1").fetchall() == [
        ("dcgm_a.csv", "loaded"), ("dcgm_b.csv", "unreadable"), ("dcgm_c.csv", "loaded")]
    assert con.execute("select distinct _source_file from raw.gpu_samples order by 1").fetchall() == [
        ("dcgm_a.csv",), ("dcgm_c.csv",)]
    assert [p.name for p in (tmp_path / "ledger.raw" / "gpu_samples").iterdir() if ".tmp-" in p.name] == []


def test_an_error_while_committing_leaves_no_prepared_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader fails on the first file's commit, before its transaction begins, while the next one
    was prepared ahead: the error reaches the caller, and neither file left rows or a temporary file."""
    import warehouse.raw as raw

    _usage_folder(tmp_path, {"dcgm_a.csv": None, "dcgm_b.csv": None})

    def broken(self):  # noqa: ANN001, ANN202
        raise RuntimeError("database went away")

    monkeypatch.setattr(raw._FileRows, "__enter__", broken)
    with pytest.raises(RuntimeError, match="database went away"):
        _ingest(tmp_path, 2, monkeypatch)
    folder = tmp_path / "ledger.raw" / "gpu_samples"
    assert sorted(p.name for p in folder.iterdir()) == ["_empty.parquet"]
