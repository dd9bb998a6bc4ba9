"""When the ledger's checkpoint compacts its tables (DuckDB's vacuum), and when it leaves that for later.

An incremental night deletes the rows of the days (or months) it rebuilds and inserts them again. At its
checkpoint DuckDB merges the row groups those deletes thinned, and so writes and compresses them again
(its vacuum): at 256 GPUs x 365 days the night's closing checkpoint took 3.0-3.3 s
with the vacuum and 1.3-1.5 s without it (2026-12-06, two rounds each). That night's deleted rows were
mostly in the month-grain tables, whose whole month is rebuilt every night (fct_workload_cost_lines: 7.7 %
of its rows). Without the vacuum a deleted row keeps its place in the file until a later compaction, and
scans step over it.

So the checkpoint compacts only when some table carries enough deleted rows to matter: at least
`GARBAGE_SHARE` of the rows it stores, and at least one row group of them (a smaller table is one row
group whatever it holds). 20 % is PostgreSQL's autovacuum scale factor: the same trade, with the same
default. A compacting checkpoint compacts every table changed since the last checkpoint.
`GPU_LEDGER_VACUUM=always` compacts at every checkpoint (DuckDB's own behaviour).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import duckdb

GARBAGE_SHARE = 0.20
ROW_GROUP = 122_880  # DuckDB's rows per row group
VACUUM_TASKS = 100  # DuckDB's default max_vacuum_tasks: compaction on
ENV = "GPU_LEDGER_VACUUM"  # "always", or "auto" (the default)


@dataclass(frozen=True)
class Garbage:
    """A table's deleted rows still stored in the file, and every row it stores (deleted or not)."""

    table: str
    deleted: int
    stored: int

    @property
    def share(self) -> float:
        return self.deleted / self.stored if self.stored else 0.0

    @property
    def due(self) -> bool:
        return self.deleted >= ROW_GROUP and self.share >= GARBAGE_SHARE


def _ident(*parts: str) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in parts)


def garbage(con: duckdb.DuckDBPyConnection) -> list[Garbage]:
    """Every table of the connection's database that stores deleted rows, most first. DuckDB counts a
    table's stored rows (`estimated_size`) with its deleted ones until a vacuum drops them; `count(*)`
    counts the live ones. One statement for all tables (a year of fleet-256 history: ~0.03 s)."""
    tables = con.execute(
        "select schema_name, table_name, estimated_size from duckdb_tables() "
        "where database_name = current_database() and not temporary").fetchall()
    if not tables:
        return []
    counts = " union all ".join(f"select {i} as i, count(*) as live from {_ident(s, t)}"
                                for i, (s, t, _) in enumerate(tables))
    live = dict(con.execute(counts).fetchall())
    found = [Garbage(f"{s}.{t}", int(stored) - int(live[i]), int(stored))
             for i, (s, t, stored) in enumerate(tables) if int(stored) > int(live[i])]
    return sorted(found, key=lambda g: (-g.deleted, g.table))


def vacuum_decision(con: duckdb.DuckDBPyConnection, mode: str | None = None) -> tuple[int, str]:
    """(max_vacuum_tasks for the next checkpoint, why). `mode`: "always" or "auto" (default: $GPU_LEDGER_VACUUM,
    else "auto")."""
    mode = (mode or os.environ.get(ENV) or "auto").strip().lower()
    if mode == "always":
        return VACUUM_TASKS, f"{ENV}=always"
    if mode != "auto":
        raise ValueError(f"{ENV} must be 'always' or 'auto', got {mode!r}")
    found = garbage(con)
    due = [g for g in found if g.due]
    if due:
        worst = max(due, key=lambda g: g.share)
        return VACUUM_TASKS, (f"compacting: {len(due)} tables at or above {GARBAGE_SHARE:.0%} deleted rows, "
                              f"most {worst.table} ({worst.deleted:,} of {worst.stored:,}, {worst.share:.1%})")
    if not found:
        return 0, "no deleted rows stored"
    worst = max(found, key=lambda g: g.share)
    return 0, (f"deferred: {sum(g.deleted for g in found):,} deleted rows in {len(found)} tables, most "
               f"{worst.table} ({worst.share:.1%} of {worst.stored:,}); compaction at {GARBAGE_SHARE:.0%} "
               f"and {ROW_GROUP:,} rows")


def checkpoint(con: duckdb.DuckDBPyConnection, mode: str | None = None) -> str:
    """Checkpoint the connection's database, compacting only when `vacuum_decision` says so; returns why."""
    try:
        tasks, why = vacuum_decision(con, mode)
    except duckdb.Error as exc:  # the deleted rows cannot be counted: DuckDB's own behaviour, said so
        tasks, why = VACUUM_TASKS, f"compacting: deleted rows not counted ({exc})"
    con.execute(f"set max_vacuum_tasks = {tasks}")
    con.execute("checkpoint")
    return why
