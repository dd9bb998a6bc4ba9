"""The landing zone: every input stored as received, named by its sha256, with a manifest.

Append-only: landing the same bytes twice is a no-op. Landed names come from the content hash
(plus a sanitised extension), never from the untrusted original name.

Every input file is offered again each night, so its sha256 is kept in `HOME/landing_hashes.json`
(beside the landing folder, which holds only the manifest and landed files) by (path, size,
mtime_ns, inode, ctime_ns): an unchanged file is not read again (7.7 GB, ~32 s a night at 1,000
GPUs x 30 days); any change of size, mtime, inode or ctime re-hashes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

MANIFEST = "manifest.jsonl"
HASH_CACHE = "landing_hashes.json"  # in the home, beside landing/
RACY_NS = 2_000_000_000  # a file written less than 2 s before it was hashed is not cached
HASH_WORKERS = max(1, min(4, os.cpu_count() or 1))
# Fetch configuration (pipelines/defs/ingest/fetch.py; repository defaults in config/fetch/) may sit in
# inputs/registry/: not data, never landed.
FETCH_CONFIGS = frozenset({"price_sources.yaml", "api_spend_sources.yaml"})
_EXT = re.compile(r"(\.[A-Za-z0-9]{1,8}){1,2}$")


@dataclass(frozen=True)
class LandedFile:
    """One manifest row."""

    sha256: str
    family: str
    original_name: str
    origin: str
    landed_path: str
    size: int
    observed_at: str
    http_status: int | None = None


def sha256_of(path: Path) -> str:
    """Streaming sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _stat_key(st: os.stat_result) -> list[int]:
    # ctime and inode too: a rewrite that restores the mtime (touch -d, cp -p) still changes ctime,
    # and a file replaced by rename has a new inode.
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


class HashCache:
    """sha256 of input files by path and stat (`HOME/landing_hashes.json`), so an input offered
    again unchanged is not read again. A miss (new path, or any stat field changed) hashes the file."""

    def __init__(self, landing_dir: Path) -> None:
        self.path = landing_dir.parent / HASH_CACHE
        try:
            self.entries: dict[str, dict] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}  # no cache yet, or unreadable: every file is hashed
        self.changed = False
        self.used: set[str] = set()

    def sha256(self, src: Path) -> str:
        """The file's sha256, from the cache when its stat is unchanged, else read (and remembered)."""
        key = str(src.absolute())
        self.used.add(key)
        before = _stat_key(os.stat(src))
        hit = self.entries.get(key)
        if hit and hit.get("stat") == before:
            return hit["sha256"]
        digest = sha256_of(src)
        after = os.stat(src)
        # Not remembered if the file changed while it was read, or was written in the last few
        # seconds: a second write within the same timestamp tick and of the same size would keep
        # every stat field (git's "racily clean" case); such a file is simply hashed again next time.
        settled = time.time_ns() - max(after.st_mtime_ns, after.st_ctime_ns) > RACY_NS
        if _stat_key(after) == before and settled:
            self.entries[key] = {"stat": before, "sha256": digest}
            self.changed = True
        return digest

    def sha256_all(self, paths: list[Path]) -> list[str]:
        """`sha256` of each path, HASH_WORKERS files at a time: hashlib releases the GIL while it
        digests, so a fleet's inputs hash on every core (the landing of a 1,000-GPU month is ~8 GB)."""
        if len(paths) < 2:
            return [self.sha256(p) for p in paths]
        with ThreadPoolExecutor(HASH_WORKERS) as pool:
            return list(pool.map(self.sha256, paths))

    def save(self, prune: bool = False) -> None:
        """Write the cache atomically (a torn file would only cost a re-hash, never a wrong hash);
        `prune` forgets paths not asked for since it was opened (inputs that went away)."""
        if prune and set(self.entries) - self.used:
            self.entries = {k: v for k, v in self.entries.items() if k in self.used}
            self.changed = True
        if not self.changed:
            return
        tmp = self.path.with_name(self.path.name + ".part")
        tmp.write_text(json.dumps(self.entries, sort_keys=True))
        tmp.replace(self.path)
        self.changed = False


def _safe_ext(name: str) -> str:
    match = _EXT.search(name)
    return match.group(0).lower() if match else ""


def read_manifest(landing_dir: Path) -> list[LandedFile]:
    """Every manifest row, in landing order."""
    path = landing_dir / MANIFEST
    if not path.exists():
        return []
    return [LandedFile(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def land_file(
    src: Path,
    family: str,
    landing_dir: Path,
    *,
    origin: str | None = None,
    observed_at: datetime | None = None,
    http_status: int | None = None,
    known: dict[tuple[str, str], LandedFile] | None = None,
    hashes: HashCache | None = None,
    digest: str | None = None,
) -> tuple[LandedFile, bool]:
    """Land one file; returns (manifest row, newly_landed). Same bytes and family: no-op.
    With `hashes`, an unchanged file's sha256 comes from the cache instead of a read; `digest` is
    the sha256 when the caller has it already."""
    if digest is None:
        digest = hashes.sha256(src) if hashes is not None else sha256_of(src)
    known = known if known is not None else {(f.family, f.sha256): f for f in read_manifest(landing_dir)}
    if (family, digest) in known:
        return known[(family, digest)], False
    target_dir = landing_dir / family
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / f"{digest}{_safe_ext(src.name)}"
    if not target.exists():
        tmp = target.with_suffix(target.suffix + ".part")
        shutil.copyfile(src, tmp)
        tmp.replace(target)
    stamp = (observed_at or datetime.fromtimestamp(src.stat().st_mtime, tz=timezone.utc)).astimezone(timezone.utc)
    row = LandedFile(
        sha256=digest, family=family, original_name=src.name, origin=origin or str(src),
        landed_path=str(target.relative_to(landing_dir)), size=src.stat().st_size,
        observed_at=stamp.strftime("%Y-%m-%dT%H:%M:%SZ"), http_status=http_status,
    )
    with open(landing_dir / MANIFEST, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(row), sort_keys=True) + "\n")
    known[(family, digest)] = row
    return row, True


def input_files(inputs_dir: Path, family: str) -> list[Path]:
    """Regular files under inputs/<family>/, recursively, skipping hidden files and provenance notes."""
    root = inputs_dir / family
    if not root.is_dir():
        return []
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
        and p.name.upper() not in {"PROVENANCE.MD", "README.MD", "LICENSE", "NOTICE"}
        and not (family == "registry" and p.parent == root and p.name in FETCH_CONFIGS)
    )


def land_inputs(inputs_dir: Path, landing_dir: Path, families: tuple[str, ...]) -> tuple[int, int]:
    """Land every file under inputs/<family>/ for each family; returns (files seen, newly landed)."""
    landing_dir.mkdir(parents=True, exist_ok=True)
    known = {(f.family, f.sha256): f for f in read_manifest(landing_dir)}
    hashes = HashCache(landing_dir)
    seen = new = 0
    try:
        for family in families:
            files = input_files(inputs_dir, family)
            for src, digest in zip(files, hashes.sha256_all(files), strict=True):
                _, landed = land_file(src, family, landing_dir, known=known, hashes=hashes, digest=digest)
                seen += 1
                new += int(landed)
    finally:
        hashes.save(prune=True)
    return seen, new
