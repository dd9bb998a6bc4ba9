"""Homes for `bench_refresh.py --next-day --reuse-home`: a pristine base, cheap working copies, a result check.

A full refresh of a year of history takes tens of minutes; the next day it is held to takes
seconds to minutes. So the d1-(N-1) home is built once and kept as `FLEET/home-base`, and every
measurement of the next day runs on a fresh copy of it at `FLEET/home` -- the path the base was
built at, because the ledger keeps absolute paths (the `raw.gpu_samples` view names its Parquet
folder; Dagster's run storage and the landing hash cache name their files).

What the copy shares with the base, and why that is safe:
- landed files (`landing/<family>/<sha256>.<ext>`) are hard links: a landed file is never written
  again (same bytes, same name; new bytes get a new name). The manifest (`landing/manifest.jsonl`)
  is appended to, so it is copied.
- the raw lake's Parquet parts (`ledger.raw/<table>/<hash>.parquet`) are hard links: a load writes a
  temporary file and renames it over the part (warehouse/raw_files.py), which replaces the copy's
  directory entry and leaves the base's inode alone.
- everything else (ledger.duckdb, serving.duckdb, dbt-target, dagster, landing_hashes.json,
  last_refresh.json, reports, logs) is written in place by a refresh, so it is copied.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb

DAILY = re.compile(r"^(dcgm|sacct|litellm_spend_logs)_(\d{4}-\d{2}-\d{2})\.(csv|txt)$")
MANIFEST = "manifest.jsonl"
SHARED_DIRS = ("landing", "ledger.raw")  # immutable files, hard-linked (see the module doc)


def _shared(rel: Path) -> bool:
    return rel.parts[0] in SHARED_DIRS and rel.name != MANIFEST


def copy_home(base: Path, home: Path, symbolic_landing: bool = False) -> tuple[int, int]:
    """Replace `home` with a working copy of `base`; (files linked, bytes copied). `symbolic_landing`:
    landed files are symbolic links to the base's, for a base landed by `land_by_link`, whose landed
    files are the inputs themselves: a hard link would change their ctime and so miss the hash cache."""
    shutil.rmtree(home, ignore_errors=True)
    linked = copied = 0
    for src in sorted(base.rglob("*")):
        rel = src.relative_to(base)
        dst = home / rel
        if src.is_dir() and not src.is_symlink():
            dst.mkdir(parents=True, exist_ok=True)
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if symbolic_landing and rel.parts[0] == "landing" and rel.name != MANIFEST and not src.is_symlink():
            dst.symlink_to(src)
            linked += 1
            continue
        if _shared(rel) and not src.is_symlink():
            try:
                os.link(src, dst)
                linked += 1
                continue
            except OSError:
                pass
        shutil.copy2(src, dst, follow_symlinks=False)
        copied += src.lstat().st_size
    shutil.copystat(base, home)
    # The copy's pages are dirty in the page cache until the kernel writes them back: the measured
    # refresh's first fsync (DuckDB's first checkpoint) then waited for the copied ledger itself, 0.6-0.7 s
    # of a 365-day fleet-256 next day (a 1.8 GB ledger) that a home used night after night never pays.
    os.sync()
    return linked, copied


def published_fingerprint(serving: Path) -> dict[str, list[str]]:
    """Per published table: [rows, sum of each DECIMAL column] -- money to the cent, independent of
    run ids and timestamps, so two refreshes that published the same figures give the same result."""
    con = duckdb.connect(str(serving), read_only=True)
    try:
        tables = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main' "
            "and table_type = 'BASE TABLE' order by 1").fetchall()]
        out: dict[str, list[str]] = {}
        for table in tables:
            money = [r[0] for r in con.execute(
                "select column_name from information_schema.columns where table_schema = 'main' "
                "and table_name = ? and data_type like 'DECIMAL%' order by ordinal_position", [table]).fetchall()]
            exprs = ["count(*)"] + [f'sum("{c}")' for c in money]
            row = con.execute(f'select {", ".join(exprs)} from main."{table}"').fetchone()
            out[table] = [str(row[0])] + [f"{c}={Decimal(v) if v is not None else None}" for c, v in zip(money, row[1:])]
        return out
    finally:
        con.close()


def compare_with_previous(record: Path, fingerprint: dict[str, list[str]], how: str) -> str:
    """Compare with the fingerprint saved in `record` by an earlier next day of the same fleet, then
    save this one; one line saying whether the published tables are the same."""
    line = "first next day recorded for this fleet"
    if record.exists():
        prev = json.loads(record.read_text())
        old = prev["tables"]
        differ = sorted(t for t in set(old) | set(fingerprint) if old.get(t) != fingerprint.get(t))
        rows = sum(int(v[0]) for v in fingerprint.values())
        line = (f"same published tables as the previous next day ({prev['how']}): {len(fingerprint)} tables, "
                f"{rows:,} rows, every DECIMAL column's sum equal" if not differ else
                f"DIFFERENT from the previous next day ({prev['how']}) in {len(differ)} tables: "
                + "; ".join(f"{t} {old.get(t)} -> {fingerprint.get(t)}" for t in differ[:6]))
    record.write_text(json.dumps({"how": how, "tables": fingerprint}, indent=1))
    return line


def hold_back_days(inputs: Path, view: Path, days: int = 1) -> list[tuple[str, list[Path]]]:
    """Make `view` hard links to every input file except the per-day files of the last `days` days; return
    those, (day, files) oldest first. A link already in place is kept: a new one would change the file's
    ctime, which the landing hash cache keys on, and a reused base home would read its whole history again."""
    files = [p for p in sorted(inputs.rglob("*")) if p.is_file() and not p.name.startswith(".")]
    last = set(sorted({m.group(2) for p in files if (m := DAILY.match(p.name))})[-days:])
    held: dict[str, list[Path]] = {}
    keep = set()
    for src in files:
        m = DAILY.match(src.name)
        if m and m.group(2) in last:
            held.setdefault(m.group(2), []).append(src)
            continue
        dst = view / src.relative_to(inputs)
        keep.add(dst)
        if dst.exists() and os.path.samefile(src, dst):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.unlink(missing_ok=True)
        link(src, dst)
    for stale in [p for p in view.rglob("*") if p.is_file() and p not in keep]:
        stale.unlink()
    return sorted(held.items())


def hold_back_last_day(inputs: Path, view: Path) -> list[Path]:
    """`hold_back_days` of one day: the last day's per-day files."""
    return [p for _, files in hold_back_days(inputs, view) for p in files]


def link(src: Path, dst: Path) -> None:
    """`dst` as a hard link to `src` (a copy across file systems): the same bytes, no second copy on disk.
    Not a symbolic link: landing does not follow one out of the inputs folder, so every file of a view
    of symlinks was refused as unreadable and the refresh published empty tables."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def land_by_link(home: Path, inputs: Path) -> int:
    """Land every input of `inputs` into `home` by hard link, its sha256 in the home's hash cache, so
    the refresh that follows finds each file hashed and landed already and only writes its manifest
    row: the landing folder shares the inputs' bytes instead of copying them (a year of fleet-256 is
    ~24 GB; landing copies all of a family before dropping duplicates). That refresh's landing stage
    is not a measurement; the home it leaves is the one a copying landing would. Returns files linked."""
    from warehouse.landing import PATH_LIMIT, HashCache, _safe_ext, _stat_key, scan_inputs, scrub_name

    landing = home / "landing"
    cache = HashCache(landing)
    linked = 0
    for family in sorted(p.name for p in inputs.iterdir() if p.is_dir()):
        files = scan_inputs(inputs, family)[0]
        for src, digest in zip(files, cache.sha256_all(files), strict=True):
            if isinstance(digest, OSError):
                continue  # the refresh reads it and refuses it as it would
            target = landing / family / f"{digest}{_safe_ext(src.name)}"
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                os.link(src, target)
                linked += 1
            # A new link changes the input's ctime, which the cache keys on: key it on the stat after it.
            entry = cache.entries.get(scrub_name(str(src.absolute()), PATH_LIMIT))
            if entry is not None:
                entry["stat"] = _stat_key(os.stat(src, follow_symlinks=False))
    cache.changed = True
    cache.save()
    return linked
