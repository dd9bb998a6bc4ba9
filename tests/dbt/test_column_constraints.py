"""The `column_constraints` test: a model's declared not_null / unique constraints, one dbt node (issue 23).

The columns say `constraints: [{type: not_null}, {type: unique}]`; the model's one
`column_constraints` test (dbt/macros/test_column_constraints.sql) checks them all. These tests
prove (1) no declared constraint goes unchecked and (2) the test finds exactly the offending rows of
a hand-made table, counted as dbt's per-column tests counted them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from pipelines.dbt_project import ledger_dbt_executable, require_manifest
from warehouse.home import DBT_DIR


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads(require_manifest().read_text())


def test_every_declared_constraint_is_checked(manifest: dict) -> None:
    checked = {n["attached_node"] for n in manifest["nodes"].values()
               if n["resource_type"] == "test" and (n.get("test_metadata") or {}).get("name") == "column_constraints"}
    declared: dict[str, list[str]] = {}
    for uid, node in manifest["nodes"].items():
        for col in node.get("columns", {}).values():
            for constraint in col.get("constraints") or ():
                declared.setdefault(uid, []).append(f"{col['name']}:{constraint['type']}")
        for constraint in node.get("constraints") or ():  # model-level unique keys
            declared.setdefault(uid, []).append(f"({', '.join(constraint['columns'])}):{constraint['type']}")
    assert sum(len(v) for v in declared.values()) >= 350  # ~324 column constraints + 37 unique keys
    unchecked = sorted(uid for uid in declared if uid not in checked)
    assert not unchecked, f"constraints declared but no column_constraints test: {unchecked}"
    # no constraint type the test does not know (the macro refuses them at compile time too)
    assert {c.split(":")[1] for v in declared.values() for c in v} == {"not_null", "unique"}


def test_no_seed_declares_a_key_dbt_would_drop() -> None:
    """dbt keeps no model-level `constraints` on a seed (a key there would silently check nothing):
    a seed's key stays a `unique_combination` test."""
    import yaml

    for path in (DBT_DIR / "seeds").glob("*.yml"):
        for seed in yaml.safe_load(path.read_text()).get("seeds", []):
            assert "constraints" not in seed, f"{path.name}: seed {seed['name']} declares constraints"


def _run_on(tmp_path: Path, rows: list[tuple]) -> tuple[dict, list[tuple]]:
    """Run gpu_catalog's column_constraints test on a ledger whose gpu_catalog holds `rows`."""
    ledger = tmp_path / "ledger.duckdb"  # dbt-duckdb names the catalog after the file: "ledger"
    con = duckdb.connect(str(ledger))
    con.execute("create schema reference")
    con.execute("create table reference.gpu_catalog (gpu_model varchar, gpu_class varchar, architecture varchar,"
                " memory_gb integer, memory_bandwidth_gbs integer, bf16_dense_tflops decimal(10,2),"
                " fp8_dense_tflops decimal(10,2), tdp_w integer, interconnect varchar, source varchar)")
    con.executemany("insert into reference.gpu_catalog (gpu_model, gpu_class, memory_gb, source) values (?, ?, ?, ?)",
                    rows)
    con.close()
    return _run_test(tmp_path, ledger, "gpu_catalog")


def _run_test(tmp_path: Path, ledger: Path, model: str) -> tuple[dict, list[tuple]]:
    """Run `model`'s column_constraints test with dbt on `ledger`; its result and the rows it returns."""
    target = tmp_path / "target"
    target.mkdir()
    # the repo's parse state: dbt parses partially instead of from scratch (~10 s); it applies because
    # dbt runs as the pipeline runs it, inside the ledger's folder with the relative var (pipelines/dbt_entry.py)
    shutil.copy(DBT_DIR / "target" / "partial_parse.msgpack", target / "partial_parse.msgpack")
    done = subprocess.run(
        [ledger_dbt_executable(), "--in", str(ledger.parent), "test", "--select",
         f"test_name:column_constraints,{model}",
         "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR), "--target-path", str(target),
         "--log-path", str(tmp_path), "--vars", json.dumps({"ledger_db": ledger.name})],
        capture_output=True, text=True, timeout=600, check=False)
    results = [r for r in json.loads((target / "run_results.json").read_text())["results"]
               if r["unique_id"].startswith("test.")]
    assert len(results) == 1, done.stdout[-3000:]
    (compiled,) = [p for p in (target / "compiled").rglob(f"column_constraints_{model}_*.sql")]
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        offending = sorted(con.execute(compiled.read_text()).fetchall(), key=str)
    finally:
        con.close()
    return results[0], offending


def test_finds_each_null_and_duplicate(tmp_path: Path) -> None:
    # gpu_catalog declares gpu_model not_null + unique, gpu_class / memory_gb / source not_null.
    rows = [
        ("A", "x", 80, "s"),
        ("A", None, 80, "s"),  # duplicate gpu_model A (2 rows); gpu_class null (1)
        ("B", "y", None, None),  # memory_gb null (1), source null (1)
        (None, "z", 1, "s"),  # gpu_model null (1); a null is not a duplicate
        ("C", "z", 2, "s"),  # clean
    ]
    result, offending = _run_on(tmp_path, rows)
    # offending rows: nulls 1 + 1 + 1 + 1 = 4, plus the 2 rows sharing gpu_model 'A' = 6
    assert result["status"] == "fail" and result["failures"] == 6
    assert offending == sorted([
        ("not_null", "gpu_model", None, 1), ("not_null", "gpu_class", None, 1),
        ("not_null", "memory_gb", None, 1), ("not_null", "source", None, 1),
        ("unique", "gpu_model", "A", 2),
    ], key=str)


def test_passes_a_clean_table(tmp_path: Path) -> None:
    result, offending = _run_on(tmp_path, [("A", "x", 80, "s"), ("B", "y", 40, "t")])
    assert result["status"] == "pass" and result["failures"] == 0 and offending == []


def test_a_model_level_key_counts_duplicates_and_null_keys_group_together(tmp_path: Path, manifest: dict) -> None:
    """fct_chargeback_monthly's key (team_id, billing_period_start, currency), the old unique_combination."""
    node = manifest["nodes"]["model.gpu_ledger.fct_chargeback_monthly"]
    (key,) = [c["columns"] for c in node["constraints"] if c["type"] == "unique"]
    assert key == ["team_id", "billing_period_start", "currency"]
    not_null = [c["name"] for c in node["columns"].values()
                if any(k["type"] == "not_null" for k in c.get("constraints") or ())]
    cols = list(dict.fromkeys(key + not_null))
    ledger = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(ledger))
    con.execute("create schema marts")
    con.execute(f"create table marts.fct_chargeback_monthly ({', '.join(c + ' varchar' for c in cols)})")

    def row(team: str | None) -> list:
        return [{"team_id": team, "billing_period_start": "2025-01-01", "currency": "USD"}.get(c, "x") for c in cols]
    con.executemany(f"insert into marts.fct_chargeback_monthly values ({', '.join('?' for _ in cols)})",
                    [row("a"), row("a"), row(None), row(None), row("b")])
    con.close()
    result, offending = _run_test(tmp_path, ledger, "fct_chargeback_monthly")
    # team_id null in 2 rows; key (a, 2025-01-01, USD) twice = 2 rows; key (null, ...) twice = 2 rows
    assert result["status"] == "fail" and result["failures"] == 2 + 2 + 2
    assert offending == sorted([
        ("not_null", "team_id", None, 2),
        ("unique", "team_id, billing_period_start, currency", "2025-01-01|USD", 2),
        ("unique", "team_id, billing_period_start, currency", "a|2025-01-01|USD", 2),
    ], key=str)
