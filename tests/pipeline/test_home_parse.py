"""A home's dbt parse state gives way to the project's newer one (pipelines/dbt_parse.py
`refresh_home_parse`): after a code update a home re-parsed only part of the project, and a model's
incremental strategy (given by a dispatched macro) kept its old value there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipelines import dbt_parse


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "dbt" / "target").mkdir(parents=True)
    monkeypatch.setattr(dbt_parse, "DBT_DIR", tmp_path / "dbt")
    return tmp_path / "dbt" / "target" / dbt_parse.PARTIAL_PARSE


def _state(path: Path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def test_an_older_home_state_is_dropped_for_the_projects(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home" / "dbt-target"
    _state(project, "project", 2_000)
    _state(home / dbt_parse.PARTIAL_PARSE, "home", 1_000)
    dbt_parse.refresh_home_parse(home)
    assert not (home / dbt_parse.PARTIAL_PARSE).exists()  # dagster-dbt copies the project's in its place


def test_a_newer_home_state_or_none_stays_as_it_is(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home" / "dbt-target"
    _state(project, "project", 1_000)
    _state(home / dbt_parse.PARTIAL_PARSE, "home", 2_000)
    dbt_parse.refresh_home_parse(home)
    assert (home / dbt_parse.PARTIAL_PARSE).read_text() == "home"
    dbt_parse.refresh_home_parse(tmp_path / "new-home")  # a new home: nothing to drop, nothing created
    assert not (tmp_path / "new-home").exists()


def test_the_manifest_is_parsed_once_per_version_of_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = tmp_path / "manifest.json"
    monkeypatch.setattr(dbt_parse, "MANIFEST", manifest)
    dbt_parse._parsed.cache_clear()
    _state(manifest, '{"nodes": {"model.a": {}}}', 1_000)
    first = dbt_parse.load_manifest()
    assert first == {"nodes": {"model.a": {}}}
    assert dbt_parse.load_manifest() is first  # the same document: the file was not read again
    # rewritten by `dbt parse`: another size and time, so a new document
    _state(manifest, '{"nodes": {"model.a": {}, "model.b": {}}}', 2_000)
    second = dbt_parse.load_manifest()
    assert sorted(second["nodes"]) == ["model.a", "model.b"]
    # the same size rewritten within the file system's time: the time alone tells them apart
    _state(manifest, '{"nodes": {"model.a": {}, "model.c": {}}}', 3_000)
    assert sorted(dbt_parse.load_manifest()["nodes"]) == ["model.a", "model.c"]
    manifest.unlink()
    with pytest.raises(FileNotFoundError, match="gpu-ledger prepare"):
        dbt_parse.load_manifest()
