"""Landing remembers each input's sha256 by path and stat: an unchanged file is
not read again on the next night; a file whose size, mtime (or inode, ctime) changed is hashed again."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from warehouse import landing, landing_io
from warehouse.landing import HASH_CACHE, land_inputs, read_manifest


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files landing reads to hash them (its one hasher, patched to count)."""
    reads: list[str] = []
    real = landing.sha256_of

    def counting(path: Path, copy_to: Path | None = None) -> str:
        reads.append(Path(path).name)
        return real(path, copy_to)

    monkeypatch.setattr(landing, "sha256_of", counting)
    # Files written by this test are seconds old: let them be cached at once (the racy-write
    # guard has its own test below).
    monkeypatch.setattr(landing, "RACY_NS", -1)
    return reads


def _inputs(tmp_path: Path) -> Path:
    usage = tmp_path / "inputs" / "usage"
    usage.mkdir(parents=True)
    (usage / "a.csv").write_text("timestamp,uuid\n2026-01-01T00:00:00Z,GPU-1\n")
    (usage / "b.csv").write_text("timestamp,uuid\n2026-01-01T00:00:00Z,GPU-2\n")
    return tmp_path / "inputs"


def test_unchanged_files_are_not_read_again(tmp_path: Path, counted: list[str]) -> None:
    inputs, landing_dir = _inputs(tmp_path), tmp_path / "home" / "landing"
    assert land_inputs(inputs, landing_dir, ("usage",)) == (2, 2)
    assert sorted(counted) == ["a.csv", "b.csv"]
    cache = json.loads((tmp_path / "home" / HASH_CACHE).read_text())
    expected = hashlib.sha256((inputs / "usage" / "a.csv").read_bytes()).hexdigest()
    assert cache[str((inputs / "usage" / "a.csv").absolute())]["sha256"] == expected
    counted.clear()
    assert land_inputs(inputs, landing_dir, ("usage",)) == (2, 0)
    assert counted == []
    assert len(read_manifest(landing_dir)) == 2
    # the landing folder itself still holds only the manifest and landed files
    assert sorted(p.name for p in landing_dir.iterdir()) == ["manifest.jsonl", "usage"]


def test_same_size_new_mtime_is_hashed_and_landed_again(tmp_path: Path, counted: list[str]) -> None:
    inputs, landing_dir = _inputs(tmp_path), tmp_path / "home" / "landing"
    land_inputs(inputs, landing_dir, ("usage",))
    a = inputs / "usage" / "a.csv"
    st = a.stat()
    a.write_text("timestamp,uuid\n2026-01-01T00:00:00Z,GPU-9\n")  # same length, other bytes
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert a.stat().st_size == st.st_size
    counted.clear()
    assert land_inputs(inputs, landing_dir, ("usage",)) == (2, 1)
    assert counted == ["a.csv"]
    digests = {f.sha256 for f in read_manifest(landing_dir)}
    assert hashlib.sha256(a.read_bytes()).hexdigest() in digests and len(digests) == 3


def test_rewrite_that_restores_the_mtime_is_still_hashed(tmp_path: Path, counted: list[str]) -> None:
    # `touch -d` / `cp -p` style: same size, same mtime, new bytes; the ctime moves, so it is re-read.
    inputs, landing_dir = _inputs(tmp_path), tmp_path / "home" / "landing"
    land_inputs(inputs, landing_dir, ("usage",))
    b = inputs / "usage" / "b.csv"
    st = b.stat()
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns - 10_000_000_000))  # moves ctime, keeps the bytes
    land_inputs(inputs, landing_dir, ("usage",))  # the new stat is remembered
    time.sleep(0.05)  # past the kernel's timestamp tick, so the write below gets a new ctime
    st = b.stat()
    b.write_text("timestamp,uuid\n2026-01-01T00:00:00Z,GPU-8\n")
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (b.stat().st_size, b.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    counted.clear()
    assert land_inputs(inputs, landing_dir, ("usage",)) == (2, 1)
    assert counted == ["b.csv"]


def test_recent_writes_and_vanished_inputs_are_not_kept(tmp_path: Path, counted: list[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    inputs, landing_dir = _inputs(tmp_path), tmp_path / "home" / "landing"
    monkeypatch.setattr(landing, "RACY_NS", 3600 * 10**9)  # every file counts as just written
    land_inputs(inputs, landing_dir, ("usage",))
    counted.clear()
    land_inputs(inputs, landing_dir, ("usage",))
    assert sorted(counted) == ["a.csv", "b.csv"]  # nothing cached: read again
    monkeypatch.setattr(landing, "RACY_NS", -1)
    land_inputs(inputs, landing_dir, ("usage",))
    (inputs / "usage" / "b.csv").unlink()
    land_inputs(inputs, landing_dir, ("usage",))
    cache = json.loads((tmp_path / "home" / HASH_CACHE).read_text())
    assert list(cache) == [str((inputs / "usage" / "a.csv").absolute())]


def test_unreadable_cache_means_hashing_again(tmp_path: Path, counted: list[str]) -> None:
    inputs, landing_dir = _inputs(tmp_path), tmp_path / "home" / "landing"
    land_inputs(inputs, landing_dir, ("usage",))
    (tmp_path / "home" / HASH_CACHE).write_text("{not json")
    counted.clear()
    assert land_inputs(inputs, landing_dir, ("usage",)) == (2, 0)
    assert sorted(counted) == ["a.csv", "b.csv"]


def test_hashing_on_several_cores_keeps_each_file_its_own_digest(tmp_path: Path) -> None:
    """`sha256_all` hashes files in threads: every digest still belongs to its own file, in order."""
    files = []
    for i in range(9):
        f = tmp_path / f"f{i}.bin"
        f.write_bytes(bytes([i]) * (3 << 20 if i % 3 == 0 else 100 + i))  # big and small ones interleaved
        files.append(f)
    cache = landing.HashCache(tmp_path / "landing")
    assert cache.sha256_all(files) == [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]


def test_cached_files_are_answered_without_the_thread_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hits are a stat and a lookup in the calling thread; only the misses go to the pool, and each digest
    still lands at its own file's place when hits and misses interleave."""
    monkeypatch.setattr(landing, "RACY_NS", -1)
    files = []
    for i in range(6):
        f = tmp_path / f"f{i}.bin"
        f.write_bytes(bytes([i]) * (200 + i))
        files.append(f)
    cache = landing.HashCache(tmp_path / "landing")
    cache.sha256_all(files[::2])  # f0, f2, f4 cached
    pools: list[list[int]] = []
    real = landing.ThreadPoolExecutor

    class Counting(real):  # type: ignore[misc, valid-type]
        def map(self, fn, *iterables, **kwargs):  # noqa: ANN001, ANN201
            items = list(iterables[0])
            pools.append(items)
            return super().map(fn, items, **kwargs)

    monkeypatch.setattr(landing, "ThreadPoolExecutor", Counting)
    files[5].unlink()  # a vanished file: its OSError stays at its place
    got = cache.sha256_all(files)
    assert got[:5] == [hashlib.sha256(f.read_bytes()).hexdigest() for f in files[:5]]
    assert isinstance(got[5], FileNotFoundError)
    assert pools == [[1, 3]]  # the two misses' positions, nothing else
    assert cache.sha256_all(files[:5]) == got[:5] and pools == [[1, 3]]  # all hits now: no pool at all


def test_a_new_file_is_read_once_to_hash_and_land_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each input opened once: hashed while copied into the landing folder (no second read to copy),
    and an input whose bytes are landed already leaves no copy behind."""
    opened: list[str] = []
    real = landing_io.open_nofollow

    def counting(path: Path):
        opened.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(landing_io, "open_nofollow", counting)  # the hash while copying (sha256_of)
    monkeypatch.setattr(landing, "open_nofollow", counting)  # a copy made after the hash (land_file)
    inputs, landing_dir = _inputs(tmp_path), tmp_path / "home" / "landing"
    (inputs / "usage" / "b_again.csv").write_bytes((inputs / "usage" / "b.csv").read_bytes())  # same bytes
    assert land_inputs(inputs, landing_dir, ("usage",)) == (3, 2)
    assert sorted(opened) == ["a.csv", "b.csv", "b_again.csv"]
    landed = sorted(p.name for p in (landing_dir / "usage").iterdir())
    expected = sorted(hashlib.sha256((inputs / "usage" / n).read_bytes()).hexdigest() + ".csv" for n in ("a.csv", "b.csv"))
    assert landed == expected  # named by content; the duplicate's copy is gone, no staged file left
    for name in landed:
        assert hashlib.sha256((landing_dir / "usage" / name).read_bytes()).hexdigest() + ".csv" == name


def test_bytes_landed_without_a_manifest_row_leave_no_staged_copy(tmp_path: Path) -> None:
    """A landed file whose manifest row is gone (a manifest restored from a backup, say) is landed
    again by its row only: the copy made while hashing is removed, not left beside it."""
    inputs, landing_dir = _inputs(tmp_path), tmp_path / "home" / "landing"
    land_inputs(inputs, landing_dir, ("usage",))
    (landing_dir / "manifest.jsonl").write_text("")
    (tmp_path / "home" / HASH_CACHE).unlink(missing_ok=True)  # hashed again, so copied while hashed
    assert land_inputs(inputs, landing_dir, ("usage",)) == (2, 2)
    left = sorted(p.name for p in (landing_dir / "usage").iterdir())
    assert all(landing.STAGED_MARK not in name for name in left), left
    assert len(left) == 2 and len(read_manifest(landing_dir)) == 2
