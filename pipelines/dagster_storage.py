"""The home's Dagster event log: Dagster's run-sharded SQLite storage, with its engines kept open.

Dagster's `SqliteEventLogStorage` creates a SQLAlchemy engine, opens the SQLite file, commits and
disposes the engine for every single event, and asset and check events are written twice (run
shard + index shard). A sample refresh stores ~1,400 events (a planned event per asset at run
start, a materialization per dbt model, a check evaluation per dbt test): profiled with py-spy,
that bookkeeping was a third of the refresh's wall time. This subclass keeps one engine
per shard for the life of the process (a small LRU, so a long-lived `dagster dev` daemon does not
hold a file handle per run ever seen), remembers which tables exist instead of opening a fresh
engine to ask before every check event, and opens the files in SQLite's WAL mode with
synchronous=NORMAL: a commit appends to the log instead of rewriting and syncing a rollback
journal (a power cut may lose the last events, never corrupt the file; the run's outcome is also
in HOME/last_refresh.json). Every event is still committed as it happens, in the same files and
schema, so `dagster dev` on the home (HOME/dagster/dagster.yaml) reads them as usual.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    SQLITE_BUSY_TIMEOUT_SECONDS,
    SqliteEventLogStorage,
)
from dagster._core.storage.sql import create_engine
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

MAX_OPEN_SHARDS = 8  # the index shard and the runs in flight; older run shards are closed

INSTANCE_YAML = """\
# Written by gpu-ledger (pipelines/dagster_storage.py): the home's Dagster instance, used by
# `gpu-ledger run` and by `make dev` (DAGSTER_HOME=HOME/dagster). Dagster's SQLite event log with
# its engines kept open per shard (one engine per event was a third of a refresh's time).
# base_dir is relative to DAGSTER_HOME (this folder), so a copied or moved home keeps its own history.
event_log_storage:
  module: pipelines.dagster_storage
  class: PooledSqliteEventLogStorage
  config:
    base_dir: {base_dir}
# Dagster's anonymous usage statistics are off; set `enabled: true` to send them (README, HOME/dagster).
telemetry:
  enabled: false
"""
RUNS_DIR = "history/runs"  # Dagster's default place, relative to the instance folder


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """`SqliteEventLogStorage` that reuses one engine per shard instead of one per event."""

    def __init__(self, base_dir: str, inst_data: Any = None) -> None:
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._tables: set[str] = set()
        super().__init__(str(resolve_base_dir(base_dir)), inst_data=inst_data)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: dict[str, Any]) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> Engine:
        engine = self._engines.get(shard)
        if engine is not None:
            self._engines.move_to_end(shard)
            return engine
        engine = create_engine(self.conn_string_for_shard(shard),
                               connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
        event.listen(engine, "connect", _wal)
        if shard not in self._initialized_dbs:
            self._initdb(engine)
            self._initialized_dbs.add(shard)
        self._engines[shard] = engine
        while len(self._engines) > MAX_OPEN_SHARDS:
            self._engines.popitem(last=False)[1].dispose()
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            with self._engine(shard).connect() as conn:
                with conn.begin():
                    yield conn

    def has_table(self, table_name: str) -> bool:
        # Asked before every asset check event; a table, once there, stays (wipe() forgets them).
        if table_name not in self._tables and super().has_table(table_name):
            self._tables.add(table_name)
        return table_name in self._tables

    def _close_engines(self) -> None:
        with self._db_lock:
            self._tables.clear()
            while self._engines:
                self._engines.popitem()[1].dispose()

    def delete_events(self, run_id: str) -> None:
        self._close_engines()  # the run's shard file is removed: no engine may keep it open
        super().delete_events(run_id)

    def wipe(self) -> None:
        self._close_engines()
        super().wipe()

    def dispose(self) -> None:
        self._close_engines()
        super().dispose()


def _wal(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def resolve_base_dir(base_dir: str) -> Path:
    """An absolute base_dir as given; a relative one (what the home's dagster.yaml holds) under DAGSTER_HOME,
    the instance folder both `dagster dev` (`make dev`) and `gpu-ledger run` set."""
    path = Path(base_dir)
    if path.is_absolute():
        return path
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        raise ValueError(f"event log base_dir {base_dir!r} is relative to DAGSTER_HOME, which is not set: "
                         "set DAGSTER_HOME to the home's dagster folder (make dev does)")
    return Path(home) / path


def write_instance_yaml(instance_dir: Path) -> Path:
    """HOME/dagster/dagster.yaml naming this storage and turning telemetry off (rewritten when its text
    changed); every path in it is relative to the instance folder."""
    path = instance_dir / "dagster.yaml"
    text = INSTANCE_YAML.format(base_dir=RUNS_DIR)
    if not path.exists() or path.read_text() != text:
        instance_dir.mkdir(parents=True, exist_ok=True)
        part = path.with_name(".dagster.yaml.part")
        part.write_text(text)
        part.replace(path)
    return path


@contextmanager
def home_instance(instance_dir: Path) -> Iterator[Any]:
    """The home's Dagster instance (HOME/dagster) for an in-process run: its dagster.yaml written (paths relative,
    for `dagster dev`), and the event log opened at this home's own folder, named absolutely for this process."""
    import dagster as dg

    write_instance_yaml(instance_dir)
    here = {"event_log_storage": {"module": __name__, "class": PooledSqliteEventLogStorage.__name__,
                                  "config": {"base_dir": str(instance_dir / RUNS_DIR)}}}
    with dg.DagsterInstance.local_temp(tempdir=str(instance_dir), overrides=here) as instance:
        yield instance
