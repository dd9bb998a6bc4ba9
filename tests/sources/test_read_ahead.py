"""`warehouse.raw.read_ahead`: the next batch is parsed in a background thread while the loader inserts
the current one. Order, errors and early stops must behave exactly as a plain loop would."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from sources.common import UnreadableFile
from warehouse.raw import read_ahead, replace_file_batches


def _tables(n: int) -> Iterator[pa.Table]:
    for i in range(n):
        yield pa.table({"i": [i]})


def test_batches_arrive_in_order_from_another_thread() -> None:
    threads: set[str] = set()

    def source() -> Iterator[pa.Table]:
        for t in _tables(50):
            threads.add(threading.current_thread().name)
            yield t

    got = [t.column("i")[0].as_py() for t in read_ahead(source())]
    assert got == list(range(50))
    assert threads == {"gpu-ledger-read-ahead"}  # parsed off the loader's thread


def test_a_producer_error_is_raised_after_the_batches_before_it() -> None:
    def source() -> Iterator[pa.Table]:
        yield from _tables(3)
        raise UnreadableFile("d.csv", 7, "cannot read as CSV")

    seen = []
    with pytest.raises(UnreadableFile, match="cannot read as CSV"):
        for t in read_ahead(source()):
            seen.append(t.column("i")[0].as_py())
    assert seen == [0, 1, 2]


def test_a_consumer_that_stops_early_closes_the_producer() -> None:
    closed = threading.Event()

    def source() -> Iterator[pa.Table]:
        try:
            yield from _tables(1000)
        finally:
            closed.set()  # where a parser closes its reader connection

    it = read_ahead(source())
    assert next(it).column("i")[0].as_py() == 0
    it.close()
    assert closed.wait(5)


class _FailingParse:
    """A batched parse whose reader fails after two batches (a file truncated mid-way)."""

    table = "gpu_samples"

    def batches(self) -> Iterator[pa.Table]:
        for line in (2, 3):
            yield pa.table({"sampled_at": pa.array([None], pa.timestamp("us")), "host": ["h"],
                            "_source_line": pa.array([line], pa.int64())})
        raise UnreadableFile("d.csv", None, "cannot read as CSV: unterminated quote")

    def finish(self) -> None:  # pragma: no cover - never reached
        raise AssertionError("finish() after a failed read")


def test_a_failed_read_rolls_the_file_back_with_the_earlier_batches(tmp_path: Path) -> None:
    """The batches inserted before the failure are not kept: the file's load is one transaction."""
    con = duckdb.connect(str(tmp_path / "l.duckdb"))
    with pytest.raises(UnreadableFile):
        replace_file_batches(con, _FailingParse(), file_hash="h" * 64, source_file="d.csv", fmt="dcgm_csv",
                             family="usage")
    assert con.execute("select count(*) from raw.gpu_samples").fetchone() == (0,)
