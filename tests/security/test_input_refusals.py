"""Inputs that are not landed are refused out loud: never followed out of the inputs, never dropped.

A symlink named like a usage file and pointing at /etc/passwd was copied into landing/; a file
named `..\\..\\x.prom` (a leading dot: "hidden") was skipped with no trace. Now (warehouse/landing.py
`scan_inputs`) a link is followed only to a file inside the inputs folder, and every refused input
(link out, broken link, link to a folder, hidden name, FIFO, unreadable file) gets a manifest row
without bytes that the loader quarantines as an unreadable file with its reason.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES
from warehouse import landing
from warehouse.ingest import ingest_family
from warehouse.landing import land_inputs, read_manifest, scan_inputs

PROM = SAMPLES / "usage" / "datadog_dcgm_fixture_label_remap.prom"
OUTSIDE = "symbolic link to a path outside the inputs folder: not followed"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """An inputs folder with one good usage file and one of each input that must be refused."""
    inputs = tmp_path / "inputs"
    usage = inputs / "usage"
    (usage / "sub").mkdir(parents=True)
    shutil.copy(PROM, usage / "good.prom")
    secret = tmp_path / "outside.txt"
    secret.write_text("root:x:0:0:PLANTED-outside:/root:/bin/bash\n")
    (usage / "node1.prom").symlink_to(secret)  # named like a usage file, pointing out of the inputs
    (usage / "passwd.prom").symlink_to("/etc/passwd")
    (usage / "gone.prom").symlink_to(tmp_path / "missing.prom")
    (usage / "outdir").symlink_to(tmp_path)
    (usage / "sub" / "alias.prom").symlink_to(usage / "good.prom")  # inside: read as the file it names
    (usage / "..\\..\\x.prom").write_text("x 1\n")
    (usage / ".git").mkdir()
    (usage / ".git" / "HEAD").write_text("ref\n")
    (usage / ".gitkeep").touch()  # a placeholder, not an input
    os.mkfifo(usage / "pipe.prom")
    return inputs


def test_scan_refuses_every_link_out_hidden_name_and_fifo(hostile: Path) -> None:
    files, refused = scan_inputs(hostile, "usage")
    assert files == [hostile / "usage" / "good.prom"]  # the inside link resolves to the same file
    assert {name: reason for name, reason, _ in refused} == {
        "..\\..\\x.prom": "hidden file (name starts with '.'): not read; rename it to load it",
        ".git": "hidden folder (name starts with '.'): not read; rename it to load it",
        "gone.prom": "broken symbolic link: not read",
        "node1.prom": OUTSIDE,
        "outdir": OUTSIDE,
        "passwd.prom": OUTSIDE,
        "pipe.prom": "not a regular file (FIFO, socket or device): not read",
    }


def test_nothing_from_outside_reaches_landing_and_each_refusal_is_a_reject(hostile: Path, tmp_path: Path) -> None:
    landing_dir = tmp_path / "home" / "landing"
    assert land_inputs(hostile, landing_dir, ("usage",)) == (1, 1)
    for path in landing_dir.rglob("*"):
        assert not path.is_symlink()
        if path.is_file():
            assert b"PLANTED-outside" not in path.read_bytes() and b"root:x:0:0" not in path.read_bytes()
    rows = read_manifest(landing_dir)
    assert len([r for r in rows if r.refused]) == 7 and all(r.landed_path == "" for r in rows if r.refused)
    assert land_inputs(hostile, landing_dir, ("usage",)) == (1, 0)
    assert len(read_manifest(landing_dir)) == len(rows)  # offered again: the same rows, nothing new

    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    try:
        summary = ingest_family(con, "usage", landing_dir, "run-1")
        rejects = dict(con.execute("select file_name, message from audit.dq_rejects "
                                   "where rule = 'unreadable_file'").fetchall())
        statuses = dict(con.execute("select source_file, status from audit.file_loads").fetchall())
    finally:
        con.close()
    assert rejects["node1.prom"] == OUTSIDE and rejects["passwd.prom"] == OUTSIDE
    assert rejects["..\\..\\x.prom"].startswith("hidden file")
    assert len(rejects) == 7 and summary.files_loaded == 1
    assert statuses["good.prom"] == "loaded" and statuses["pipe.prom"] == "unreadable"
    assert "passwd.prom: " + OUTSIDE in summary.problems


def test_a_file_swapped_for_a_link_after_the_scan_is_refused(tmp_path: Path, monkeypatch) -> None:
    """The scan saw a file; by the read it is a link to /etc/passwd. The read does not follow it."""
    inputs = tmp_path / "inputs"
    (inputs / "usage").mkdir(parents=True)
    swapped = inputs / "usage" / "late.prom"
    swapped.symlink_to("/etc/passwd")
    monkeypatch.setattr(landing, "scan_inputs", lambda _i, _f: ([swapped], []))
    landing_dir = tmp_path / "landing"
    assert land_inputs(inputs, landing_dir, ("usage",)) == (0, 0)
    (row,) = read_manifest(landing_dir)
    assert row.original_name == "late.prom" and row.refused.startswith("cannot be read")
    assert not list(landing_dir.glob("usage/*"))


def test_control_characters_in_a_name_never_reach_the_record(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    (inputs / "usage").mkdir(parents=True)
    shutil.copy(PROM, inputs / "usage" / "a\nforged line\x1b[31m.prom")
    land_inputs(inputs, tmp_path / "landing", ("usage",))
    (row,) = read_manifest(tmp_path / "landing")
    assert row.original_name == "a?forged line?[31m.prom" and "\n" not in row.origin
    assert len((tmp_path / "landing" / "manifest.jsonl").read_text().splitlines()) == 1
