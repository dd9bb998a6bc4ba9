"""Which raw tables a refresh's new files will write, known before the run starts.

A source family holds several raw tables (usage: telemetry samples, scheduler jobs, node inventory,
GPU processes; api_spend: proxy requests, provider cost and usage buckets, model prices). A night
that brings a day of telemetry, Slurm accounting and proxy logs writes three of those eight tables:
the models reading only the other five (their staging views, the marts built from them and their
tests) would be rebuilt from the same rows. A refresh therefore selects the models reading the
tables its new files write, not every model of their families (pipelines/refresh_state.py
`affected_assets`).

The files a family's raw load will parse are those landed and not yet in `audit.file_loads`
(warehouse/ingest.py loads exactly those); each one's format is recognised by content as the load
does, and its format names the tables it writes (`SourceFormat.tables`). Whenever that is not known
for certain, the answer for the family is None, and every model of the family is rebuilt, as before:
a format that declares no tables, the registry (a registry change reloads every registry file), a
family whose inputs changed without a file to load (a file gone), or a ledger that cannot be read.
A restated file is new bytes, so a file to load: the tables it writes are rebuilt, and the
incremental models among their readers rebuild the days it touches.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from sources.catalog import recognise
from warehouse.home import Home
from warehouse.landing import LandedFile, read_manifest

# Families loaded as a whole whenever one of their files changes (warehouse/ingest.py `ingest_family`).
WHOLE_FAMILIES = frozenset({"registry"})


def _loaded(ledger_db: Path) -> set[tuple[str, str]] | None:
    """(family, file hash) of every file the ledger has loaded or quarantined; None when unreadable."""
    if not ledger_db.exists():
        return None
    try:
        con = duckdb.connect(str(ledger_db), read_only=True)
    except duckdb.Error:
        return None
    try:
        return set(con.execute("select family, file_hash from audit.file_loads").fetchall())
    except duckdb.Error:
        return None
    finally:
        con.close()


def pending_tables(home: Path, families: list[str]) -> dict[str, list[str] | None]:
    """Per family in `families`, the raw tables its files not loaded yet will write (sorted; empty:
    only refused or unrecognised files, which add audit rows only); None: any table of the family."""
    paths = Home(home)
    by_file = [f for f in families if f not in WHOLE_FAMILIES]  # the families answered file by file
    loaded = _loaded(paths.ledger_db) if by_file else None
    found: dict[str, list[str] | None] = dict.fromkeys(families)
    if loaded is None:
        return found
    pending: dict[str, dict[str, LandedFile]] = {f: {} for f in by_file}
    for landed in read_manifest(paths.landing):
        if landed.family in pending and (landed.family, landed.sha256) not in loaded:
            pending[landed.family].setdefault(landed.sha256, landed)
    for family, files in pending.items():
        if not files:  # inputs changed with nothing to load (a file gone): not known, so everything
            continue
        tables: set[str] | None = set()
        for landed in files.values():
            if landed.refused:  # nothing landed: quarantined with an audit row only
                continue
            fmt = recognise(paths.landing / landed.landed_path, family)
            if fmt is None:  # quarantined as an unknown format: an audit row only
                continue
            if not fmt.tables:
                tables = None
                break
            tables.update(fmt.tables)
        found[family] = None if tables is None else sorted(tables)
    return found
