"""dbt docs describe every published column; the yml files under dbt/models follow one naming scheme.

- Naming (dbt Labs, "How we structure our dbt projects"): each model folder has one
  `_<folder>__models.yml` (its models, columns, tests and unit tests) and a staging source is defined
  in `_<source>__sources.yml`; no other yml file lives under dbt/models.
- Docs: every model under models/marts has a description, lists its columns and describes each one
  (read from the manifest `gpu-ledger prepare` parsed; the session's start made it current).
- The listed columns are the columns the mart really outputs: compared with the relation built by
  the session's sample refresh (the `sample_run` fixture the e2e tests share). A mart with an enforced
  contract is also checked by dbt itself at build time; here its columns must carry a data_type.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from pipelines.dbt_project import require_manifest

REPO = Path(__file__).resolve().parents[2]
DBT_DIR = REPO / "dbt"
MODELS = DBT_DIR / "models"
SOURCES_FILE = re.compile(r"^_(?P<source>[a-z0-9_]+?)__sources\.yml$")


@pytest.fixture(scope="module")
def manifest() -> dict:
    """The parsed manifest (`pipelines.dbt_project.parse_manifest`: re-parsed at the session's start
    whenever the project changed), as Dagster and the pipeline read it; no second parse of ~9 s."""
    return json.loads(require_manifest().read_text())


def _marts(manifest: dict) -> list[dict]:
    marts = [node for node in manifest["nodes"].values()
             if node["resource_type"] == "model" and node["original_file_path"].startswith("models/marts/")]
    assert marts, "no model under models/marts in the manifest"
    return sorted(marts, key=lambda node: node["name"])


def yml_naming_problems(models_dir: Path) -> list[str]:
    """What breaks the scheme: each problem names the file (or folder) and the rule."""
    problems = []
    for path in sorted(models_dir.rglob("*")):
        if path.suffix not in (".yml", ".yaml"):
            continue
        rel = path.relative_to(models_dir)
        folder = path.parent.name
        doc = yaml.safe_load(path.read_text()) or {}
        sources = [s.get("name") for s in doc.get("sources") or []]
        match = SOURCES_FILE.match(path.name)
        if path.name == f"_{folder}__models.yml":
            if sources:
                problems.append(f"{rel}: defines sources {sources}; they belong in _<source>__sources.yml")
        elif match:
            if sources != [match["source"]]:
                problems.append(f"{rel}: a __sources.yml defines exactly its source "
                                f"'{match['source']}' (found {sources})")
            others = sorted(k for k in doc if k not in ("version", "sources"))
            if others:
                problems.append(f"{rel}: a __sources.yml holds only sources (found {others})")
        else:
            problems.append(f"{rel}: name it _{folder}__models.yml or _<source>__sources.yml")
    for folder in sorted({p.parent for p in models_dir.rglob("*.sql")}):
        expected = folder / f"_{folder.name}__models.yml"
        if not expected.is_file():
            problems.append(f"{folder.relative_to(models_dir)}: models without {expected.name}")
    return problems


def test_yml_files_follow_the_naming_scheme() -> None:
    problems = yml_naming_problems(MODELS)
    assert not problems, "yml naming scheme broken:\n" + "\n".join(problems)


def test_naming_check_catches_the_old_names(tmp_path: Path) -> None:
    """The check is not vacuous: the names the models had before the naming scheme are reported."""
    (tmp_path / "marts" / "billing").mkdir(parents=True)
    (tmp_path / "marts" / "billing" / "ledger_focus.sql").write_text("select 1 as x\n")
    (tmp_path / "marts" / "billing" / "_billing_marts.yml").write_text("version: 2\nmodels: []\n")
    (tmp_path / "staging" / "usage").mkdir(parents=True)
    (tmp_path / "staging" / "usage" / "_usage__sources.yml").write_text(
        "version: 2\nsources:\n  - name: billing\n")
    problems = "\n".join(yml_naming_problems(tmp_path))
    assert "_billing_marts.yml: name it _billing__models.yml" in problems
    assert "marts/billing: models without _billing__models.yml" in problems
    assert "_usage__sources.yml: a __sources.yml defines exactly its source 'usage'" in problems


def test_every_mart_is_documented_in_its_folder_yml(manifest: dict) -> None:
    problems = []
    for node in _marts(manifest):
        folder = Path(node["original_file_path"]).parent
        expected = f"{manifest['metadata']['project_name']}://{folder}/_{folder.name}__models.yml"
        if node.get("patch_path") != expected:
            problems.append(f"{node['name']}: documented in {node.get('patch_path')}, expected {expected}")
        if not node["description"].strip():
            problems.append(f"{node['name']}: no model description")
    assert not problems, "\n".join(problems)


def test_every_mart_column_has_a_description(manifest: dict) -> None:
    problems, described = [], 0
    for node in _marts(manifest):
        if not node["columns"]:
            problems.append(f"{node['name']}: lists no columns")
        for name, column in node["columns"].items():
            if (column.get("description") or "").strip():
                described += 1
            else:
                problems.append(f"{node['name']}.{name}: no description")
    assert not problems, f"{len(problems)} undocumented (described: {described}):\n" + "\n".join(problems)


def test_contracted_models_type_every_column(manifest: dict) -> None:
    """An enforced contract is the SQL's column list: dbt compares them at build time; each needs a type."""
    problems = []
    for node in manifest["nodes"].values():
        if node["resource_type"] != "model" or not node["config"].get("contract", {}).get("enforced"):
            continue
        if not node["columns"]:
            problems.append(f"{node['name']}: enforced contract without columns")
        problems += [f"{node['name']}.{name}: no data_type in the contract"
                     for name, column in node["columns"].items() if not column.get("data_type")]
    assert not problems, "\n".join(problems)


@pytest.mark.e2e
def test_mart_yml_columns_are_the_built_columns(manifest: dict, sample_run: dict) -> None:
    """Every column a mart outputs is listed (and so described) in its yml, and nothing else is."""
    import duckdb

    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(sample_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        problems = []
        for node in _marts(manifest):
            built = [r[0] for r in con.execute(
                "select column_name from information_schema.columns where table_schema = ? and table_name = ? "
                "order by ordinal_position", [node["schema"], node["alias"]]).fetchall()]
            if not built:
                problems.append(f"{node['name']}: no relation {node['schema']}.{node['alias']} in the build")
                continue
            listed = list(node["columns"])
            missing = [c for c in built if c not in listed]
            extra = [c for c in listed if c not in built]
            if missing:
                problems.append(f"{node['name']}: outputs columns its yml does not list: {missing}")
            if extra:
                problems.append(f"{node['name']}: yml lists columns the model does not output: {extra}")
    finally:
        con.close()
    assert not problems, "\n".join(problems)
