"""The landing zone: every input stored as received, named by its sha256, with a manifest.

Append-only: landing the same bytes twice is a no-op. Landed names come from the content hash
(plus a sanitised extension), never from the untrusted original name.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

MANIFEST = "manifest.jsonl"
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
) -> tuple[LandedFile, bool]:
    """Land one file; returns (manifest row, newly_landed). Same bytes and family: no-op."""
    digest = sha256_of(src)
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
    seen = new = 0
    for family in families:
        for src in input_files(inputs_dir, family):
            _, landed = land_file(src, family, landing_dir, known=known)
            seen += 1
            new += int(landed)
    return seen, new
