"""The `column_constraints` test: a model's declared not_null / unique constraints and value checks, one dbt node.

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
from warehouse.expectations.dbt_tests import CHECK_TESTS, column_checks
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
    for uid, node in manifest["nodes"].items():  # value checks (the former per-column value tests)
        for col in node.get("columns", {}).values():
            declared.setdefault(uid, []).extend(f"{col['name']}:{kind}" for kind in column_checks(col))
    assert sum(1 for v in declared.values() for c in v if c.split(":")[1] in CHECK_TESTS) >= 70
    unchecked = sorted(uid for uid in declared if declared[uid] and uid not in checked)
    assert not unchecked, f"constraints or checks declared but no column_constraints test: {unchecked}"
    # no constraint type or check the test does not know (the macro refuses them at compile time too)
    assert {c.split(":")[1] for v in declared.values() for c in v} == {"not_null", "unique", *CHECK_TESTS}
    # and no per-column value test left beside them (each was a dbt node of its own)
    assert not [n["unique_id"] for n in manifest["nodes"].values() if n["resource_type"] == "test"
                and (n.get("test_metadata") or {}).get("name") in CHECK_TESTS]


def test_foreign_keys_ride_on_the_column_constraints_test(manifest: dict) -> None:
    """dbt's per-column `relationships` tests became the `relationships` argument of the model's one
    column_constraints test; only a warning-severity one (another severity) stays a test of its own.
    Each ref in the argument is a dependency of the test, so dbt builds the parent first."""
    tests = [n for n in manifest["nodes"].values() if n["resource_type"] == "test"]
    left = [n["unique_id"] for n in tests if (n.get("test_metadata") or {}).get("name") == "relationships"
            and n["config"]["severity"].lower() != "warn"]
    assert not left, f"fold these into the model's column_constraints test: {left}"
    folded = {n["unique_id"]: n for n in tests if (n.get("test_metadata") or {}).get("name") == "column_constraints"
              and (n["test_metadata"]["kwargs"] or {}).get("relationships")}
    # 17 since the marts' workload_id -> registry keys became one warning (assert_workloads_are_registered)
    assert sum(len(n["test_metadata"]["kwargs"]["relationships"]) for n in folded.values()) >= 15
    for uid, node in folded.items():
        assert uid.startswith(f"test.gpu_ledger.column_constraints_{node['attached_node'].split('.')[-1]}_.")
        parents = {manifest["nodes"][d]["name"] for d in node["depends_on"]["nodes"]}
        for rel in node["test_metadata"]["kwargs"]["relationships"]:
            assert rel["to"].startswith("ref('") and rel["to"][5:-2] in parents, (uid, rel)


def test_no_seed_declares_a_key_dbt_would_drop() -> None:
    """dbt keeps no model-level `constraints` on a seed (a key there would silently check nothing):
    a seed's key stays a `unique_combination` test."""
    import yaml

    for path in (DBT_DIR / "seeds").glob("*.yml"):
        for seed in yaml.safe_load(path.read_text()).get("seeds", []):
            assert "constraints" not in seed, f"{path.name}: seed {seed['name']} declares constraints"


def _run_tests(tmp_path: Path, ledger: Path, models: list[str]) -> dict[str, tuple[dict, list[tuple]]]:
    """Run the column_constraints tests of `models` with ONE dbt invocation on `ledger` (each dbt start
    costs ~8 s); per model its result and the rows its compiled SQL returns."""
    target = tmp_path / "target"
    target.mkdir()
    # the repo's parse state: dbt parses partially instead of from scratch (~10 s); it applies because
    # dbt runs as the pipeline runs it, inside the ledger's folder with the relative var (pipelines/dbt_entry.py)
    shutil.copy(DBT_DIR / "target" / "partial_parse.msgpack", target / "partial_parse.msgpack")
    done = subprocess.run(
        [ledger_dbt_executable(), "--in", str(ledger.parent), "test", "--select",
         # by the test's own name: `test_name:column_constraints,gpu_catalog` would also pick every test whose
         # relationships argument refers to gpu_catalog
         *[f"column_constraints_{model}_" for model in models],
         "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR), "--target-path", str(target),
         "--log-path", str(tmp_path), "--vars", json.dumps({"ledger_db": ledger.name})],
        capture_output=True, text=True, timeout=600, check=False)
    results = [r for r in json.loads((target / "run_results.json").read_text())["results"]
               if r["unique_id"].startswith("test.")]
    assert len(results) == len(models), done.stdout[-3000:]
    out = {}
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        for model in models:
            (compiled,) = [p for p in (target / "compiled").rglob(f"column_constraints_{model}_*.sql")]
            (result,) = [r for r in results if r["unique_id"].startswith(f"test.gpu_ledger.column_constraints_{model}_")]
            out[model] = (result, sorted(con.execute(compiled.read_text()).fetchall(), key=str))
    finally:
        con.close()
    return out


def _table(con: duckdb.DuckDBPyConnection, node: dict, schema: str, rows: list[dict],
           extra: dict[str, str] | None = None) -> None:
    """`schema.<model>` holding `rows` (column -> value) over values that pass every rule of the model;
    `extra`: more columns (name -> type, null unless a row sets them), e.g. a foreign key."""
    cols, valid = _columns_it_reads(node)
    cols.update(extra or {})
    valid.update(dict.fromkeys(extra or {}))
    con.execute(f"create schema if not exists {schema}")
    con.execute(f"create table {schema}.{node['name']} ({', '.join(f'{c} {t}' for c, t in cols.items())})")
    con.executemany(f"insert into {schema}.{node['name']} values ({', '.join('?' for _ in cols)})",
                    [[{**valid, **r}[c] for c in cols] for r in rows])


# gpu_catalog declares gpu_model not_null + unique, gpu_class / memory_gb / source not_null.
CATALOG_ROWS = [
    ("A", "x", 80, "s"),
    ("A", None, 80, "s"),  # duplicate gpu_model A (2 rows); gpu_class null (1)
    ("B", "y", None, None),  # memory_gb null (1), source null (1)
    (None, "z", 1, "s"),  # gpu_model null (1); a null is not a duplicate
    ("C", "z", 2, "s"),  # clean
]
# int_gpu_idle_hourly's value checks; one hour each, so the model's key stays unique
IDLE_ROWS = [
    {},                                                          # clean
    {"idle_flag": "busy", "unallocated_gpu_hours": -1},          # a value outside the set; below 0
    {"idle_flag": "no usage data for the pool", "unallocated_gpu_hours": -0.0000005},  # within 1e-6: passes
    {"idle_flag": None, "unallocated_gpu_hours": None},          # NULL passes both checks
    {"over_allocation_gpu_hours": -2},                           # below 0
]
# gpu_aliases: alias not_null + unique, gpu_model not_null, and gpu_model -> gpu_catalog.gpu_model (A, B, C)
ALIAS_ROWS = [
    {"alias": "a100", "gpu_model": "A"},       # clean
    {"alias": "h100", "gpu_model": "Z"},       # no catalog row Z (1)
    {"alias": "h100 sxm", "gpu_model": "Z"},   # no catalog row Z (2)
    {"alias": "l4", "gpu_model": "Y"},         # no catalog row Y (1)
    {"alias": "b200", "gpu_model": None},      # gpu_model null (1); a null is no orphan
]
MODELS = ["gpu_catalog", "fct_chargeback_monthly", "int_gpu_idle_hourly", "int_gpu_prices_observed", "gpu_aliases"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, manifest: dict) -> dict[str, tuple[dict, list[tuple]]]:
    """One ledger with a hand-made table for each of MODELS, their column_constraints tests run once."""
    tmp_path = tmp_path_factory.mktemp("column_constraints")
    ledger = tmp_path / "ledger.duckdb"  # dbt-duckdb names the catalog after the file: "ledger"
    con = duckdb.connect(str(ledger))
    con.execute("create schema reference")
    con.execute("create table reference.gpu_catalog (gpu_model varchar, gpu_class varchar, architecture varchar,"
                " memory_gb integer, memory_bandwidth_gbs integer, bf16_dense_tflops decimal(10,2),"
                " fp8_dense_tflops decimal(10,2), tdp_w integer, interconnect varchar, source varchar)")
    con.executemany("insert into reference.gpu_catalog (gpu_model, gpu_class, memory_gb, source) values (?, ?, ?, ?)",
                    CATALOG_ROWS)
    nodes = manifest["nodes"]
    chargeback = {"billing_period_start": "2025-01-01", "currency": "USD"}
    _table(con, nodes["model.gpu_ledger.fct_chargeback_monthly"], "marts",
           [{**chargeback, "team_id": t} for t in ("a", "a", None, None, "b")])
    _table(con, nodes["model.gpu_ledger.int_gpu_idle_hourly"], "intermediate",
           [{"idle_flag": "no usage data in the hour", "hour_start": f"h{i}", **r} for i, r in enumerate(IDLE_ROWS)])
    # every rule kept: two rows of valid values, distinct where a column is unique; gpu_model 'Q' is in no
    # catalog row, but its relationship only holds `where: is_mapped` and that row is not mapped
    _table(con, nodes["model.gpu_ledger.int_gpu_prices_observed"], "intermediate",
           [{"observation_id": "o1", "gpu_model": "A", "is_mapped": True},
            {"observation_id": "o2", "gpu_model": "Q", "is_mapped": False}],
           extra={"gpu_model": "varchar", "is_mapped": "boolean"})
    _table(con, nodes["seed.gpu_ledger.gpu_aliases"], "reference", ALIAS_ROWS)
    con.close()
    return _run_tests(tmp_path, ledger, MODELS)


def test_finds_each_null_and_duplicate(runs: dict) -> None:
    result, offending = runs["gpu_catalog"]
    # offending rows: nulls 1 + 1 + 1 + 1 = 4, plus the 2 rows sharing gpu_model 'A' = 6
    assert result["status"] == "fail" and result["failures"] == 6
    assert offending == sorted([
        ("not_null", "gpu_model", None, 1), ("not_null", "gpu_class", None, 1),
        ("not_null", "memory_gb", None, 1), ("not_null", "source", None, 1),
        ("unique", "gpu_model", "A", 2),
    ], key=str)


def test_passes_a_clean_table(runs: dict, manifest: dict) -> None:
    node = manifest["nodes"]["model.gpu_ledger.int_gpu_prices_observed"]
    kinds = {k for c in node["columns"].values() for k in [*column_checks(c), *(x["type"] for x in c["constraints"])]}
    assert kinds == {"not_null", "unique", "accepted_values", "currency_is_known", "greater_than_zero"}
    result, offending = runs["int_gpu_prices_observed"]
    assert result["status"] == "pass" and result["failures"] == 0 and offending == []


def test_a_model_level_key_counts_duplicates_and_null_keys_group_together(runs: dict, manifest: dict) -> None:
    """fct_chargeback_monthly's key (team_id, billing_period_start, currency), the old unique_combination."""
    node = manifest["nodes"]["model.gpu_ledger.fct_chargeback_monthly"]
    (key,) = [c["columns"] for c in node["constraints"] if c["type"] == "unique"]
    assert key == ["team_id", "billing_period_start", "currency"]
    result, offending = runs["fct_chargeback_monthly"]
    # rows: team a, a, null, null, b. team_id null in 2 rows; key (a, 2025-01-01, USD) twice = 2 rows;
    # key (null, ...) twice = 2 rows
    assert result["status"] == "fail" and result["failures"] == 2 + 2 + 2
    assert offending == sorted([
        ("not_null", "team_id", None, 2),
        ("unique", "team_id, billing_period_start, currency", "2025-01-01|USD", 2),
        ("unique", "team_id, billing_period_start, currency", "a|2025-01-01|USD", 2),
    ], key=str)


def _columns_it_reads(node: dict) -> tuple[dict[str, str], dict[str, object]]:
    """The columns a model's column_constraints test reads (keys, not_null, checked), with a type and a
    value that passes every rule: a hand-made table breaks only what a test says it breaks."""
    cols: dict[str, str] = {}
    valid: dict[str, object] = {}
    for c in node.get("constraints") or ():
        for name in c.get("columns") or ():
            cols[name], valid[name] = "varchar", "k"
    for col in node["columns"].values():
        checks = column_checks(col)
        if checks or col.get("constraints"):
            numeric = bool(set(checks) & {"value_between", "greater_than_zero"})
            cols[col["name"]] = "double" if numeric else "varchar"
            valid[col["name"]] = (1.0 if numeric else checks["accepted_values"][0] if "accepted_values" in checks
                                  else "USD" if "currency_is_known" in checks else "x")
    return cols, valid


def test_value_checks_count_each_offending_row(runs: dict, manifest: dict) -> None:
    """int_gpu_idle_hourly's value checks (the former value_between / accepted_values tests), folded
    into its column_constraints test: a NULL passes a check, each offending row counts once."""
    node = manifest["nodes"]["model.gpu_ledger.int_gpu_idle_hourly"]
    checks = {c["name"]: column_checks(c) for c in node["columns"].values() if column_checks(c)}
    assert checks["idle_flag"] == {"accepted_values": [
        "allocated exceeds capacity", "allocated without a capacity record", "no usage data for the pool",
        "no usage data in the hour"]}
    assert checks["unallocated_gpu_hours"] == {"value_between": {"min_value": 0}}
    result, offending = runs["int_gpu_idle_hourly"]
    # IDLE_ROWS: idle_flag 'busy' 1 row; unallocated_gpu_hours -1 1 row; over_allocation_gpu_hours -2 1 row = 3
    assert result["status"] == "fail" and result["failures"] == 3
    assert offending == sorted([
        ("accepted_values", "idle_flag", None, 1),
        ("value_between", "unallocated_gpu_hours", None, 1),
        ("value_between", "over_allocation_gpu_hours", None, 1),
    ], key=str)


def test_relationships_count_each_orphan_row(runs: dict) -> None:
    """gpu_aliases.gpu_model -> gpu_catalog.gpu_model, the former `relationships` test, now an argument of
    the seed's column_constraints test: each child row whose non-null value has no parent row counts."""
    result, offending = runs["gpu_aliases"]
    # ALIAS_ROWS: Z twice + Y once have no catalog row (3); the null gpu_model breaks not_null (1) only
    assert result["status"] == "fail" and result["failures"] == 3 + 1
    assert offending == sorted([
        ("not_null", "gpu_model", None, 1),
        ("relationships", "gpu_model", "Z", 2),
        ("relationships", "gpu_model", "Y", 1),
    ], key=str)
