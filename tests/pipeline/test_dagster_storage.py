"""The home's Dagster event log (pipelines/dagster_storage.py): Dagster's SQLite storage with its engines
kept open. Same files, same schema: what it writes, Dagster's stock storage reads back."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from pipelines.dagster_storage import (
    MAX_OPEN_SHARDS,
    PooledSqliteEventLogStorage,
    home_instance,
    write_instance_yaml,
)


@dg.asset
def tiny() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"rows": 3})


@dg.asset_check(asset=tiny)
def tiny_has_rows() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


def test_events_land_in_dagsters_own_files_and_engines_stay_bounded(tmp_path: Path) -> None:
    instance_dir = tmp_path / "dagster"
    runs = []
    with home_instance(instance_dir) as instance:
        storage = instance.event_log_storage
        assert isinstance(storage, PooledSqliteEventLogStorage)
        for _ in range(MAX_OPEN_SHARDS + 4):
            result = dg.materialize([tiny, tiny_has_rows], instance=instance)
            assert result.success
            runs.append(result.run_id)
        assert len(storage._engines) <= MAX_OPEN_SHARDS  # the index shard + the most recent runs
        ours = {run: [e.dagster_event_type for e in instance.all_logs(run) if e.is_dagster_event] for run in runs}
        # deleting a run's events closes the engines first (the shard file goes away)
        instance.delete_run(runs[0])
        assert not instance.all_logs(runs[0])
    # Dagster's stock storage reads the same files: every event of the other runs is there
    stock = SqliteEventLogStorage(str(instance_dir / "history" / "runs"))
    for run in runs[1:]:
        events = [e.dagster_event_type for e in stock.get_logs_for_run(run) if e.is_dagster_event]
        assert events == ours[run]
        assert dg.DagsterEventType.ASSET_MATERIALIZATION in events
        assert dg.DagsterEventType.ASSET_CHECK_EVALUATION in events
    import sqlite3

    for shard in (instance_dir / "history" / "runs").glob("*.db"):  # WAL: a commit appends to the log
        assert sqlite3.connect(shard).execute("pragma journal_mode").fetchone()[0] == "wal", shard
    latest = stock.get_latest_materialization_events([dg.AssetKey("tiny")])[dg.AssetKey("tiny")]
    assert latest is not None and latest.run_id == runs[-1]  # the cross-run index shard too


def test_instance_yaml_is_rewritten_only_when_it_changes(tmp_path: Path) -> None:
    path = write_instance_yaml(tmp_path)
    assert "base_dir: history/runs" in path.read_text()  # relative to the instance folder: a copied home works
    assert "telemetry:\n  enabled: false" in path.read_text()
    stamp = path.stat().st_mtime_ns
    assert write_instance_yaml(tmp_path).stat().st_mtime_ns == stamp
    path.write_text("# edited\n")
    assert "PooledSqliteEventLogStorage" in write_instance_yaml(tmp_path).read_text()


def test_a_copied_home_keeps_its_own_event_log(tmp_path: Path) -> None:
    """A home copied elsewhere writes its runs under its own dagster folder, never the original's."""
    import shutil

    first = tmp_path / "first" / "dagster"
    with home_instance(first) as instance:
        assert dg.materialize([tiny], instance=instance).success
    copy = tmp_path / "copy" / "dagster"
    shutil.copytree(first, copy)
    before = sorted(p.name for p in (first / "history" / "runs").glob("*.db"))
    with home_instance(copy) as instance:
        run = dg.materialize([tiny], instance=instance).run_id
        assert Path(instance.event_log_storage._base_dir) == copy / "history" / "runs"
    assert (copy / "history" / "runs" / f"{run}.db").exists()
    assert sorted(p.name for p in (first / "history" / "runs").glob("*.db")) == before  # the original untouched


def test_dagster_dev_on_a_moved_home_reads_its_own_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make dev` opens the instance from dagster.yaml alone (DAGSTER_HOME=HOME/dagster): a moved home's
    relative base_dir resolves inside it, and telemetry stays off."""
    import shutil

    first = tmp_path / "first" / "dagster"
    with home_instance(first) as instance:
        run = dg.materialize([tiny], instance=instance).run_id
    moved = tmp_path / "moved" / "dagster"
    shutil.move(str(tmp_path / "first"), str(tmp_path / "moved"))
    monkeypatch.setenv("DAGSTER_HOME", str(moved))
    instance = dg.DagsterInstance.from_config(str(moved))
    try:
        assert Path(instance.event_log_storage._base_dir) == moved / "history" / "runs"
        assert instance.all_logs(run)  # the run recorded before the move is read from the moved folder
        assert instance.telemetry_enabled is False
    finally:
        instance.dispose()
