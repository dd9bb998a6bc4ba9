"""YAML alias bombs: registry, quotes and fetch-config YAML refuse anchors and aliases outright.

A 387-byte file of nested aliases used to load as a 7.2 MB policy value, and 570 bytes exhausted
memory. The loader (sources/registry/yaml_lines.py) now stops at the first anchor, before any
expansion, with an unreadable-file error naming file, line and problem; the other files load.
"""

from __future__ import annotations

import resource
import shutil
from pathlib import Path

import duckdb
import pytest

from sources.common import UnreadableFile
from sources.prices import fetch as price_fetch
from sources.prices import quotes
from sources.registry import workloads
from sources.registry.yaml_lines import line_of, load_yaml
from tests.conftest import SAMPLES
from warehouse.ingest import ingest_family
from warehouse.landing import land_inputs


def _bomb(levels: int, width: int = 9, top: str = "policies:\n  bomb: ") -> str:
    """The classic "billion laughs": each level an anchored list of `width` aliases of the one before."""
    lines = ["l0: &l0 [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + f"\n{top}*l{levels - 1}\n"


@pytest.mark.parametrize("levels", [5, 9])  # ~60 kB of nodes, then ~400 million: both refused at once
def test_alias_bomb_is_an_unreadable_file_naming_file_and_line(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "policies.yaml"
    path.write_text(_bomb(levels))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(UnreadableFile) as err:
        workloads.parse(path)
    assert err.value.path == str(path) and err.value.line == 1
    assert "anchor &l0" in err.value.problem and "aliases are not accepted" in err.value.problem
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB: nothing was expanded


def test_a_single_alias_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "teams.yaml"
    path.write_text("teams:\n  - team_id: a\n    name: A\npolicies:\n  x: 1\n  y: *nowhere\n")
    with pytest.raises(UnreadableFile) as err:
        load_yaml(path)
    assert err.value.line == 6 and "alias *nowhere" in err.value.problem


def test_plain_yaml_still_loads_with_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("policies:\n  a: 1\n  b: [x, y]\n")
    doc = load_yaml(path)
    assert doc == {"policies": {"a": 1, "b": ["x", "y"]}}
    assert line_of(doc["policies"], "b") == 3


def test_quotes_yaml_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "quotes.yaml"
    path.write_text(_bomb(9, top="quotes:\n  - note: "))
    with pytest.raises(UnreadableFile, match="anchor &l0"):
        quotes.parse_yaml(path)


def test_fetch_config_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "price_sources.yaml"
    path.write_text(_bomb(9, top="sources: "))
    with pytest.raises(UnreadableFile) as err:
        price_fetch.load_sources(path)
    assert err.value.path == str(path) and err.value.line == 1


def test_the_other_registry_files_still_load(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    shutil.copytree(SAMPLES / "registry", inputs / "registry")
    (inputs / "registry" / "bomb.yaml").write_text(_bomb(9))
    land_inputs(inputs, tmp_path / "landing", ("registry",))
    con = duckdb.connect(str(tmp_path / "ledger.duckdb"))
    try:
        summary = ingest_family(con, "registry", tmp_path / "landing", "run-1")
        rejects = con.execute("select file_name, line, rule, message from audit.dq_rejects").fetchall()
        teams = con.execute("select count(*) from raw.registry_teams").fetchone()[0]
    finally:
        con.close()
    assert rejects == [("bomb.yaml", 1, "unreadable_file", rejects[0][3])]
    assert "aliases are not accepted" in rejects[0][3]
    assert summary.files_loaded == summary.files_seen - 1 and teams > 0


def test_an_alias_in_a_fetch_config_fails_the_check_not_the_asset(tmp_path: Path) -> None:
    """An operator's fetch config in INPUTS/registry/ with an alias: nothing is fetched, the
    providers_fetched check fails naming file, line and problem, and the asset still succeeds, so
    its family's landed files load."""
    import dagster as dg

    from pipelines.defs.ingest.fetch import API_SPEND_KEY, PRICES_KEY, fetch_api_spend, fetch_prices
    from pipelines.resources import LedgerResource

    inputs, home = tmp_path / "inputs", tmp_path / "home"
    (inputs / "registry").mkdir(parents=True)
    for name in ("price_sources.yaml", "api_spend_sources.yaml"):
        (inputs / "registry" / name).write_text(_bomb(9, top="sources: "))
    result = dg.materialize([fetch_prices, fetch_api_spend],
                            resources={"ledger": LedgerResource(home=str(home), inputs=str(inputs))})
    assert result.success
    checks = {e.asset_key: e for e in result.get_asset_check_evaluations()}
    for key, name in ((PRICES_KEY, "price_sources.yaml"), (API_SPEND_KEY, "api_spend_sources.yaml")):
        assert not checks[key].passed
        failed = checks[key].metadata["failed_providers"].value
        assert f"{name}:1: anchor &l0" in failed and "aliases are not accepted" in failed
