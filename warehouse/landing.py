"""The landing zone: every input stored as received, named by its sha256, with a manifest.

Append-only: landing the same bytes twice is a no-op. Landed names come from the content hash
(plus a sanitised extension), never from the untrusted original name.

Every input file is offered again each night, so its sha256 is kept in `HOME/landing_hashes.json`
(beside the landing folder, which holds only the manifest and landed files) by (path, size,
mtime_ns, inode, ctime_ns): an unchanged file is not read again (7.7 GB, ~32 s a night at 1,000
GPUs x 30 days); any change of size, mtime, inode or ctime re-hashes it. A file that has to be read
is read once: its bytes are copied into the landing folder (a hidden `.staged-*` name) as they are
hashed, then renamed to the hash, or dropped when those bytes are landed already. sha256 stays the
one content hash: it names the landed file, so a faster non-cryptographic hash would still need it.

What is read from an inputs folder (`scan_inputs`): regular files under inputs/<family>/. A
symbolic link is followed only when it resolves to a file inside the inputs folder: a link out of
it (`usage/x.prom -> /etc/passwd`), a broken link and a link to a folder are refused, and so are
hidden names (a leading `.`: editor swap files, rsync partials, `..\\x.prom`), FIFOs, sockets,
devices and files that cannot be opened. Nothing is dropped silently: each refused input gets a
manifest row with `refused` set and no bytes landed, and the loader quarantines it as an unreadable
file with that reason. Only documentation notes (`NOT_INPUTS`) and the fetch configs are passed over.
Names are recorded only through `sources.secrets.scrub_name` (credentials hashed, control
characters replaced): the manifest, the hash cache and everything loaded from them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from sources.secrets import scrub_name
from warehouse.landing_io import landing_copy, open_nofollow, sha256_of, writing

MANIFEST = "manifest.jsonl"
HASH_CACHE = "landing_hashes.json"  # in the home, beside landing/
RACY_NS = 2_000_000_000  # a file written less than 2 s before it was hashed is not cached
HASH_WORKERS = max(1, min(4, os.cpu_count() or 1))
# Fetch configuration (pipelines/defs/ingest/fetch.py; repository defaults in config/fetch/) may sit in
# inputs/registry/: not data, never landed.
FETCH_CONFIGS = frozenset({"price_sources.yaml", "api_spend_sources.yaml", "fx_sources.yaml"})
#: Not inputs: notes kept beside the data (PROVENANCE.md documents a sample) and folder placeholders.
NOT_INPUTS = frozenset({"PROVENANCE.MD", "README.MD", "LICENSE", "NOTICE", ".GITKEEP", ".DS_STORE"})
PATH_LIMIT = 4096  # characters of a recorded origin path (a name: 255)
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
    refused: str | None = None  # why the input was not landed (nothing in landed_path); loaded as a reject


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
        self.staged: dict[Path, Path] = {}  # input -> the copy made while it was hashed (`sha256`)

    def cached(self, src: Path) -> tuple[str, list[int], str | None]:
        """(cache key, stat key, the cached sha256 when the file's stat is unchanged, else None)."""
        key = scrub_name(str(src.absolute()), PATH_LIMIT)  # a token in a path is never kept here
        self.used.add(key)
        before = _stat_key(os.stat(src, follow_symlinks=False))
        hit = self.entries.get(key)
        return key, before, hit["sha256"] if hit and hit.get("stat") == before else None

    def sha256(self, src: Path, stage_in: Path | None = None) -> str:
        """The file's sha256, from the cache when its stat is unchanged, else read (and remembered).
        `stage_in`: a folder where a file that has to be read is also copied as it is hashed
        (`staged_path`), so landing it needs no second read."""
        key, before, digest = self.cached(src)
        if digest is not None:
            return digest
        if stage_in is None:
            digest = sha256_of(src)
        else:
            with writing(stage_in, src.name):
                stage_in.mkdir(parents=True, exist_ok=True)
            staged = staged_path(stage_in, src)
            try:
                digest = sha256_of(src, copy_to=staged)
            except BaseException:
                staged.unlink(missing_ok=True)
                raise
            self.staged[src] = staged
        after = os.stat(src, follow_symlinks=False)
        # Not remembered if the file changed while it was read, or was written in the last few
        # seconds: a second write within the same timestamp tick and of the same size would keep
        # every stat field (git's "racily clean" case); such a file is simply hashed again next time.
        settled = time.time_ns() - max(after.st_mtime_ns, after.st_ctime_ns) > RACY_NS
        if _stat_key(after) == before and settled:
            self.entries[key] = {"stat": before, "sha256": digest}
            self.changed = True
        return digest

    def _sha256_or_error(self, src: Path, stage_in: Path | None = None) -> str | OSError:
        try:
            return self.sha256(src, stage_in)
        except OSError as exc:
            return exc

    def sha256_all(self, paths: list[Path], stage_in: Path | None = None) -> list[str | OSError]:
        """`sha256` of each path (or the OSError that stopped its read), HASH_WORKERS files at a time:
        hashlib releases the GIL while it digests, so a fleet's inputs hash on every core (the landing
        of a 1,000-GPU month is ~8 GB). `stage_in`: see `sha256`."""
        out: list[str | OSError | None] = []
        for p in paths:  # a hit is a stat and a lookup: answered here, not sent through the pool's queue
            try:
                out.append(self.cached(p)[2])
            except OSError as exc:
                out.append(exc)
        misses = [i for i, d in enumerate(out) if d is None]
        if len(misses) < 2:
            digests = [self._sha256_or_error(paths[i], stage_in) for i in misses]
        else:
            with ThreadPoolExecutor(HASH_WORKERS) as pool:
                digests = list(pool.map(lambda i: self._sha256_or_error(paths[i], stage_in), misses))
        for i, digest in zip(misses, digests, strict=True):
            out[i] = digest
        return out  # type: ignore[return-value]  # every None was replaced above

    def save(self, prune: bool = False) -> None:
        """Write the cache atomically (a torn file would only cost a re-hash, never a wrong hash);
        `prune` forgets paths not asked for since it was opened (inputs that went away)."""
        if prune and set(self.entries) - self.used:
            self.entries = {k: v for k, v in self.entries.items() if k in self.used}
            self.changed = True
        if not self.changed:
            return
        tmp = self.path.with_name(self.path.name + ".part")
        with writing(self.path, "the hash cache"):
            tmp.write_text(json.dumps(self.entries, sort_keys=True))
            tmp.replace(self.path)
        self.changed = False


_STAGE_SEQ = itertools.count()
STAGED_MARK = ".staged-"


def staged_path(stage_in: Path, src: Path) -> Path:
    """Where `HashCache.sha256` copies a file it reads (a hidden name in the family's landing folder,
    renamed to `<sha256><ext>` by `land_file`); one per read, so parallel reads never share one."""
    return stage_in / f"{STAGED_MARK}{os.getpid()}-{next(_STAGE_SEQ)}{_safe_ext(src.name)}"


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
    staged: Path | None = None,
) -> tuple[LandedFile, bool]:
    """Land one file; returns (manifest row, newly_landed). Same bytes and family: no-op.
    With `hashes`, an unchanged file's sha256 comes from the cache instead of a read; `digest` is
    the sha256 when the caller has it already, `staged` a copy of the bytes made while hashing them
    (moved into place, or removed when the bytes are landed already)."""
    if digest is None:
        digest = hashes.sha256(src) if hashes is not None else sha256_of(src)
    known = known if known is not None else {(f.family, f.sha256): f for f in read_manifest(landing_dir)}
    if (family, digest) in known:
        if staged is not None:
            staged.unlink(missing_ok=True)
        return known[(family, digest)], False
    target_dir = landing_dir / family
    target = target_dir / f"{digest}{_safe_ext(src.name)}"
    with writing(target_dir, src.name):
        target_dir.mkdir(parents=True, exist_ok=True)
    st = os.stat(src, follow_symlinks=False)
    if staged is not None:
        if target.exists():  # the bytes are landed already (a manifest row lost or rewritten)
            staged.unlink(missing_ok=True)
        else:
            with writing(target, src.name):
                staged.replace(target)  # copied while it was hashed: no second read
    elif not target.exists():
        tmp = target.with_suffix(target.suffix + ".part")
        with open_nofollow(src) as fin, landing_copy(tmp, src.name) as write:
            for chunk in iter(lambda: fin.read(1 << 20), b""):
                write(chunk)
        with writing(target, src.name):
            tmp.replace(target)
    if target.exists() and st.st_mtime_ns != target.stat().st_mtime_ns:
        # Stored as received, modification time included: a parser that has nothing else to order an
        # undated file's versions by reads the same time on every landing of the same input.
        with writing(target, src.name):
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    stamp = (observed_at or datetime.fromtimestamp(st.st_mtime, tz=UTC)).astimezone(UTC)
    row = LandedFile(
        sha256=digest, family=family, original_name=scrub_name(src.name),
        origin=scrub_name(origin or str(src), PATH_LIMIT), landed_path=str(target.relative_to(landing_dir)),
        size=st.st_size, observed_at=stamp.strftime("%Y-%m-%dT%H:%M:%SZ"), http_status=http_status,
    )
    return _append(landing_dir, row, known), True


def _append(landing_dir: Path, row: LandedFile, known: dict[tuple[str, str], LandedFile]) -> LandedFile:
    with writing(landing_dir / MANIFEST, row.original_name), open(landing_dir / MANIFEST, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(row), sort_keys=True) + "\n")
    known[(row.family, row.sha256)] = row
    return row


def refuse_input(
    name: str, family: str, reason: str, landing_dir: Path, known: dict[tuple[str, str], LandedFile], origin: str,
) -> tuple[LandedFile, bool]:
    """Record an input that is not landed (see `scan_inputs`) as a manifest row without bytes, keyed by
    the sha256 of (family, name, reason): offered again unchanged, it is the same row (no-op)."""
    name, origin = scrub_name(name), scrub_name(origin, PATH_LIMIT)
    digest = hashlib.sha256(f"refused\0{family}\0{name}\0{reason}".encode()).hexdigest()
    if (family, digest) in known:
        return known[(family, digest)], False
    row = LandedFile(sha256=digest, family=family, original_name=name, origin=origin, landed_path="", size=0,
                     observed_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), refused=reason)
    return _append(landing_dir, row, known), True


def _refusal(path: Path, real_root: Path, top: bool) -> str | None:
    """Why one directory entry is not read as an input file (None: a file, or a folder to walk)."""
    if path.name.startswith(".") and not top:
        kind = "folder" if path.is_dir() and not path.is_symlink() else "file"
        return f"hidden {kind} (name starts with '.'): not read; rename it to load it"
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if not target.exists():
            return "broken symbolic link: not read"
        if not target.is_relative_to(real_root):
            return "symbolic link to a path outside the inputs folder: not followed"
        if target.is_dir():
            return None if top else "symbolic link to a folder: not followed (its files are read where they are)"
        return None if target.is_file() else "symbolic link to a FIFO, socket or device: not read"
    if path.is_dir() or path.is_file():
        return None
    return "not a regular file (FIFO, socket or device): not read"


def scan_inputs(inputs_dir: Path, family: str) -> tuple[list[Path], list[tuple[str, str, Path]]]:
    """(files to land under inputs/<family>/, recursively; refused inputs as (name relative to
    inputs/<family>/, as loaded files are named, reason, path)). A symbolic link to a file inside
    the inputs folder is returned as that file's real path, so landing reads it without following
    any link (see the module doc)."""
    real_root = Path(os.path.realpath(inputs_dir))
    root = inputs_dir / family
    files: list[Path] = []
    refused: list[tuple[str, str, Path]] = []

    def visit(path: Path, rel: str) -> None:
        top = path == root
        if not top and (path.name.upper() in NOT_INPUTS
                        or (family == "registry" and path.parent == root and path.name in FETCH_CONFIGS)):
            return
        reason = _refusal(path, real_root, top)
        if reason is not None:
            refused.append((rel or f"{family}/", reason, path))
        elif path.is_dir():
            try:
                children = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError as exc:
                refused.append((rel or f"{family}/", f"folder cannot be read: {exc.strerror}", path))
                return
            for child in children:
                visit(Path(child.path), f"{rel}/{child.name}" if rel else child.name)
        else:
            files.append(Path(os.path.realpath(path)) if path.is_symlink() else path)

    if root.is_dir() or root.is_symlink():
        visit(root, "")
    return list(dict.fromkeys(files)), refused  # a file and a link to it: read once


def input_files(inputs_dir: Path, family: str) -> list[Path]:
    """The files `scan_inputs` lands from inputs/<family>/ (without the refused ones)."""
    return scan_inputs(inputs_dir, family)[0]


def land_inputs(inputs_dir: Path, landing_dir: Path, families: tuple[str, ...],
                contents: dict[str, list[str]] | None = None) -> tuple[int, int]:
    """Land every file under inputs/<family>/ for each family; returns (files seen, newly landed).

    Each byte is read once: an input whose sha256 is not in the hash cache is copied into the
    landing folder while it is hashed, then renamed to its hash (or dropped when those bytes are
    landed already); a cached one is not read at all. `contents` (when given) receives, per family,
    the sorted sha256 of its files and its refusals: what `pipelines/refresh_state.py` compares.
    An input that cannot be read is refused; a landing folder that cannot be written raises
    `LandingWriteError` (warehouse/landing_io.py) and refuses nothing."""
    landing_dir.mkdir(parents=True, exist_ok=True)
    known = {(f.family, f.sha256): f for f in read_manifest(landing_dir)}
    hashes = HashCache(landing_dir)
    seen = new = 0
    try:
        for family in families:
            stage = landing_dir / family
            for left in stage.glob(f"{STAGED_MARK}*") if stage.is_dir() else []:
                left.unlink(missing_ok=True)  # a copy of a landing that was killed (one lander: the refresh lock)
            files, refused = scan_inputs(inputs_dir, family)
            digests = []
            for src, digest in zip(files, hashes.sha256_all(files, stage_in=stage), strict=True):
                staged = hashes.staged.pop(src, None)
                try:
                    if isinstance(digest, OSError):
                        raise digest
                    _, landed = land_file(src, family, landing_dir, known=known, hashes=hashes, digest=digest,
                                          staged=staged)
                except OSError as exc:  # unreadable, or swapped for a link since the scan: refused, not fatal
                    if staged is not None:
                        staged.unlink(missing_ok=True)
                    root = inputs_dir / family
                    name = str(src.relative_to(root)) if src.is_relative_to(root) else src.name
                    refused.append((name, f"cannot be read: {exc.strerror or exc}", src))
                    continue
                seen += 1
                new += int(landed)
                digests.append(digest)
            for name, reason, path in refused:
                refuse_input(name, family, reason, landing_dir, known, origin=str(path))
            if contents is not None:
                contents[family] = sorted(digests) + sorted(f"refused {n}\0{r}" for n, r, _ in refused)
    finally:
        hashes.save(prune=True)
    return seen, new
