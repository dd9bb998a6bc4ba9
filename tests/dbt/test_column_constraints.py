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

from pipelines.dbt_project import dbt_executable, require_manifest
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
    assert sum(len(v) for v in declared.values()) >= 300  # the project's not_null / unique columns
    unchecked = sorted(uid for uid in declared if uid not in checked)
    assert not unchecked, f"constraints declared but no column_constraints test: {unchecked}"
    # no constraint type the test does not know (the macro refuses them at compile time too)
    assert {c.split(":")[1] for v in declared.values() for c in v} == {"not_null", "unique"}


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
    target = tmp_path / "target"
    target.mkdir()
    # the repo's parse state: dbt parses partially instead of from scratch (~10 s)
    shutil.copy(DBT_DIR / "target" / "partial_parse.msgpack", target / "partial_parse.msgpack")
    done = subprocess.run(
        [dbt_executable(), "test", "--select", "test_name:column_constraints,gpu_catalog",
         "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR), "--target-path", str(target),
         "--log-path", str(tmp_path), "--vars", json.dumps({"ledger_db": str(ledger)})],
        capture_output=True, text=True, timeout=600, check=False)
    results = [r for r in json.loads((target / "run_results.json").read_text())["results"]
               if r["unique_id"].startswith("test.")]
    assert len(results) == 1, done.stdout[-3000:]
    (compiled,) = [p for p in (target / "compiled").rglob("column_constraints_gpu_catalog_*.sql")]
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
