"""The bad-input catalogue: every broken file in tests/bad_inputs/<family>/ in ONE refresh.

One module-scoped refresh loads the whole catalogue plus the bundled registry; one test per
file then checks its expected outcome (tests/bad_inputs/expected.yaml, written by reading the
files and docs/sources/*.md) against the working database: audit.file_loads (status, rows,
rejects), audit.dq_rejects (rule, line) and raw.<table> row counts by `_source_file`, so no
good row of any file is lost. The run itself must still publish (quarantine is not fatal) and
the published dq_rejects must name every bad file.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import yaml

from tests import prefetch
from tests.conftest import SAMPLES

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
EXPECTED: dict[str, dict[str, dict]] = yaml.safe_load((HERE / "expected.yaml").read_text(encoding="utf-8"))
CASES = [(family, name, spec) for family, files in EXPECTED.items() for name, spec in files.items()]


def _huge_line(target: Path) -> None:
    """FOCUS file whose line 3 is one 2.5 MB line (a long ResourceName); 3 good rows."""
    lines = (SAMPLES / "billing" / "focus_1.0_sample_1000_multicloud.csv").read_text().splitlines()
    header, *rows = list(csv.reader(lines[:4]))
    rows[1][header.index("ResourceName")] = "r" * 2_500_000
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    target.write_text(buf.getvalue())


GENERATORS = {"huge_line": _huge_line}


def test_catalogue_is_complete() -> None:
    """At least 40 files over the five families; every file on disk has an expected outcome."""
    on_disk = {(p.parent.name, p.name) for p in HERE.glob("*/*") if p.is_file() and not p.parent.name.startswith("__")}
    listed = {(f, n) for f, n, s in CASES if "generated" not in s}
    assert on_disk == listed
    assert len(CASES) >= 40
    assert {"billing", "usage", "benchmarks", "api_spend", "prices"} <= {f for f, _, _ in CASES}


def build_catalogue_run(root: Path) -> dict:
    """One inputs folder (every catalogue file + the bundled registry), one refresh (a tests/prefetch.py job)."""
    from pipelines.cli import execute_refresh

    inputs = root / "inputs"
    shutil.copytree(SAMPLES / "registry", inputs / "registry")
    for family, name, spec in CASES:
        target = inputs / family / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if "generated" in spec:
            GENERATORS[spec["generated"]](target)
        else:
            shutil.copyfile(HERE / family / name, target)
    home = root / "home"
    ok, _, reason = execute_refresh(home, inputs, docs=False)
    con = duckdb.connect(str(home / "ledger.duckdb"), read_only=True)
    try:
        loads = {
            (fam, name): (status, rows, rejects)
            for fam, name, status, rows, rejects in con.execute(
                "select family, source_file, status, rows_loaded, rejects from audit.file_loads").fetchall()
        }
        rejects: dict[tuple[str, str], list[tuple[str, int | None]]] = {}
        for fam, name, rule, line in con.execute(
            "select source_family, file_name, rule, line from audit.dq_rejects").fetchall():
            rejects.setdefault((fam, name), []).append((rule, line))
        raw_rows: Counter[tuple[str, str]] = Counter()
        for (table,) in con.execute(
            "select table_name from information_schema.columns where table_schema = 'raw' "
            "and column_name = '_source_file'").fetchall():
            for name, n in con.execute(f'select _source_file, count(*) from raw."{table}" group by 1').fetchall():
                raw_rows[(table, name)] += n
    finally:
        con.close()
    from warehouse.landing import read_manifest

    manifest_names = {f.original_name for f in read_manifest(home / "landing")}
    return {"home": home, "ok": ok, "reason": reason, "loads": loads, "rejects": rejects, "raw": raw_rows,
            "manifest_names": manifest_names}


@pytest.fixture(scope="module")
def catalogue_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The catalogue refresh (build_catalogue_run), built ahead by tests/prefetch.py."""
    return prefetch.result("catalogue_run", tmp_path_factory)


def test_run_still_publishes(catalogue_run: dict) -> None:
    """Quarantined rows and files never block the publication."""
    assert catalogue_run["ok"], catalogue_run["reason"]
    assert (catalogue_run["home"] / "serving.duckdb").exists()


def test_published_rejects_name_every_bad_file(catalogue_run: dict) -> None:
    """serving.duckdb's dq_rejects (what dashboards count) names each file that lost a row or itself."""
    con = duckdb.connect(str(catalogue_run["home"] / "serving.duckdb"), read_only=True)
    try:
        published = {tuple(r) for r in con.execute("select source_family, file_name from dq_rejects").fetchall()}
    finally:
        con.close()
    bad = {(f, n) for f, n, s in CASES if s.get("file_rule") or (s.get("rejects") and not s.get("xfail"))}
    assert bad - published == set()


@pytest.mark.parametrize(("family", "name", "spec"), [
    pytest.param(f, n, s, id=f"{f}/{n}",
                 marks=[pytest.mark.xfail(reason=s["xfail"], strict=True)] if s.get("xfail") else [])
    for f, n, s in CASES
])
def test_file_outcome(catalogue_run: dict, family: str, name: str, spec: dict) -> None:
    loads, rejects, raw = catalogue_run["loads"], catalogue_run["rejects"], catalogue_run["raw"]
    in_raw = {t: n for (t, f), n in raw.items() if f == name}
    if spec.get("skipped") == "hidden":
        # A dotfile is skipped by landing (a user's hidden file is not data): no row anywhere.
        assert (family, name) not in loads and not in_raw
        assert name not in catalogue_run["manifest_names"]
        return
    if "duplicate_of" in spec:
        # Landing is content-addressed: the second name is never landed, parsed or loaded.
        assert (family, name) not in loads and not in_raw
        assert loads[(family, spec["duplicate_of"])][0] == "loaded"
        return
    assert (family, name) in loads, f"{name} was not landed/loaded at all"
    status, rows_loaded, n_rejects = loads[(family, name)]
    got = sorted(rejects.get((family, name), []), key=lambda r: (r[1] or 0, r[0]))
    if "file_rule" in spec:
        assert status == {"unknown_format": "unknown_format", "unreadable_file": "unreadable"}[spec["file_rule"]]
        assert [r[0] for r in got] == [spec["file_rule"]]
        assert rows_loaded == 0 and not in_raw
        return
    want = sorted(((r["rule"], r["line"]) for r in spec["rejects"]), key=lambda r: (r[1] or 0, r[0]))
    assert (status, got) == ("loaded", want)
    assert n_rejects == len(want)
    # Zero good rows lost: every good row is in raw.<table> under this file's name, nothing else.
    assert rows_loaded == spec["loads"]
    # `tables`: a file whose good rows go to several tables (a registry file), rows per table
    want_raw = spec["tables"] if "tables" in spec else {spec["table"]: spec["loads"]} if spec["loads"] else {}
    assert in_raw == want_raw


def test_a_file_without_currency_is_held_out_and_listed(catalogue_run: dict) -> None:
    """No money without a currency is published. focus_no_currency_column.csv has two lines
    (BilledCost 0.00001518370 and 0.00133333330, no BillingCurrency column, account 1234567890123) and
    the bundled registry names no default_currency_by_account: both are held out, listed with their
    sum 0.0000151837 + 0.0013333333 = 0.0013485170, and a warn-level check says so; no published
    table holds the currency 'XXX'."""
    con = duckdb.connect(str(catalogue_run["home"] / "serving.duckdb"), read_only=True)
    try:
        held = con.execute(
            "select lines_held_out, first_line, last_line, billed_cost_unknown_currency, reason "
            "from fct_billing_held_out where source_file = 'focus_no_currency_column.csv'").fetchall()
        in_ledger = con.execute(
            "select count(*) from ledger_focus where x_source_file = 'focus_no_currency_column.csv'").fetchone()[0]
        warned = con.execute("select status from check_results where check_name = "
                             "'assert_no_billing_lines_held_out'").fetchall()
        cols = con.execute("select table_name, column_name from information_schema.columns "
                           "where column_name ilike '%currency%' and data_type = 'VARCHAR'").fetchall()
        xxx = [(t, c) for t, c in cols if con.execute(f'select count(*) from "{t}" where "{c}" = ?', ["XXX"]).fetchone()[0]]
    finally:
        con.close()
    assert [(n, a, b, cost) for n, a, b, cost, _ in held] == [(2, 2, 3, Decimal("0.0013485170"))]
    assert "policies.default_currency_by_account" in held[0][4]
    assert in_ledger == 0
    assert warned == [("warn",)]
    assert xxx == []


def test_data_quality_reader_lists_the_held_out_file(catalogue_run: dict) -> None:
    from warehouse.serving_quality import held_out_bills

    held = held_out_bills(catalogue_run["home"] / "serving.duckdb")
    assert held["source_file"].tolist() == ["focus_no_currency_column.csv"]
    assert held["lines_held_out"].tolist() == [2]


def test_a_serving_run_without_its_date_is_listed_not_charged(catalogue_run: dict) -> None:
    """vllm_tp8_pp1_no_date.json (a real result, its date null, with its sidecar: 8 GPUs for 205.2 s, a workload
    by its model) would be charged, but no month holds it. It stays in fct_benchmark_runs as evidence, has no
    cost line (before, its line had a NULL period and the blocking checks withheld the publication) and the
    warning check names it."""
    con = duckdb.connect(str(catalogue_run["home"] / "serving.duckdb"), read_only=True)
    try:
        runs = con.execute("select r.run_id, r.workload_id, r.gpu_count, r.run_started_at from fct_benchmark_runs r "
                           "where r.tool = 'vllm' and r.run_started_at is null").fetchall()
        lines = con.execute("select count(*) from fct_workload_cost_lines where source_ref in "
                            "(select run_id from fct_benchmark_runs where tool = 'vllm')").fetchone()[0]
        warned = con.execute("select status, detail from check_results where check_name = "
                             "'assert_charged_benchmark_runs_have_a_start'").fetchall()
    finally:
        con.close()
    assert len(runs) == 1 and runs[0][1] is not None and runs[0][2] == 8
    assert lines == 0
    assert warned == [("warn", "Benchmark runs not charged: no start time: 1 benchmark run")]


def test_a_run_of_an_unregistered_workload_publishes_and_is_named(catalogue_run: dict) -> None:
    """training_runs_unregistered_workload.csv: one completed run of vision-pretrain-x, a workload the bundled
    registry does not list. Before, the marts' blocking relationship checks withheld every source; now the run is
    published (fct_training_runs) and the warning check names the workload, here in fct_training_runs."""
    con = duckdb.connect(str(catalogue_run["home"] / "serving.duckdb"), read_only=True)
    try:
        runs = con.execute("select run_id from fct_training_runs where workload_id = 'vision-pretrain-x'").fetchall()
        warned = con.execute("select status from check_results where check_name = "
                             "'assert_workloads_are_registered'").fetchall()
    finally:
        con.close()
    ledger = duckdb.connect(str(catalogue_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        named = ledger.execute(
            "select failing_row from audit.check_failures where check_name = 'assert_workloads_are_registered' "
            "and run_id = (select max(run_id) from audit.check_failures)").fetchall()
    finally:
        ledger.close()
    assert runs == [("uw-2025-03-a",)]
    assert warned == [("warn",)]
    marts = {json.loads(r)["mart"] for (r,) in named if json.loads(r)["workload_id"] == "vision-pretrain-x"}
    assert "fct_training_runs" in marts, named
