"""great-expectations suites: each passes on the bundled sample refresh, each blocking suite fails
on a doctored frame, big tables are validated on a bounded deterministic frame that still sees
bad rows, and the Dagster checks carry each suite's severity upstream of the publication."""

import json
import re
from dataclasses import replace
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest

from warehouse.expectations import CURRENCIES, MART_SUITES, RAW_SUITES, SUITES, Suite, read_frame, validate
from warehouse.expectations.runner import ROW_RULES, gx_validate, to_validate

REPO = Path(__file__).resolve().parents[2]
BLOCKING = [s for s in SUITES if s.blocking]


def _frame(sample_run: dict, suite: Suite) -> pd.DataFrame:
    """The rows a suite validates in the sample refresh: marts from the published copy, raw tables
    from the working database (raw tables are not published)."""
    assert sample_run["ok"], sample_run["reason"]
    home = sample_run["home"]
    if suite.schema == "marts":
        path, suite = home / "serving.duckdb", replace(suite, schema="main")
    else:
        path = home / "ledger.duckdb"
    con = duckdb.connect(str(path), read_only=True)
    try:
        return read_frame(con, suite)[0]
    finally:
        con.close()


# -- declarations ---------------------------------------------------------------------------------

def test_every_layer_has_suites_with_unique_check_names() -> None:
    names = [s.check_name for s in SUITES]
    assert len(names) == len(set(names))
    assert {s.key[0] for s in RAW_SUITES} == {"raw"} and {s.schema for s in RAW_SUITES} == {"raw"}
    assert {s.key[0] for s in MART_SUITES} == {"marts"} and {s.schema for s in MART_SUITES} == {"marts"}
    raw_tables = {s.table for s in RAW_SUITES}
    for table in ("billing_charges", "gpu_price_observations", "gpu_samples", "gpu_jobs", "benchmark_runs",
                  "api_requests", "registry_workloads"):
        assert table in raw_tables, f"no suite on raw.{table}"


def test_blocking_marts_are_the_ledger_critical_ones() -> None:
    blocking = {s.table for s in MART_SUITES if s.blocking}
    assert blocking == {"ledger_focus", "fct_chargeback_monthly", "fct_workload_unit_cost", "fct_gpu_price_history"}


def test_every_published_mart_has_a_suite() -> None:
    from pipelines.dbt_project import parse_manifest

    manifest = json.loads(parse_manifest().read_text())
    marts = {n["name"] for n in manifest["nodes"].values()
             if n["resource_type"] == "model" and n["path"].startswith("marts")}
    assert marts, "no marts in the dbt manifest"
    missing = marts - {s.table for s in MART_SUITES}
    assert not missing, f"marts without a great-expectations suite: {sorted(missing)}"


def test_currency_set_is_the_dbt_one() -> None:
    macro = (REPO / "dbt" / "macros" / "known_currencies.sql").read_text()
    assert set(re.findall(r"'([A-Z]{3})'", macro)) == set(CURRENCIES)


def test_expectations_name_real_gx_classes() -> None:
    import great_expectations as gx

    for suite in SUITES:
        for cls_name, kwargs in suite.expectations:
            getattr(gx.expectations, cls_name)(**kwargs)  # raises on a wrong name or argument


# -- the sample refresh -----------------------------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.check_name)
def test_suite_passes_on_the_sample_publication(sample_run: dict, suite: Suite) -> None:
    df = _frame(sample_run, suite)
    passed, failures = validate(suite, df)
    assert passed, failures


@pytest.mark.e2e
def test_refresh_records_and_publishes_every_gx_result(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    con = duckdb.connect(str(sample_run["home"] / "serving.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "select check_name, target, severity, passed from check_results where check_name like 'gx_%'").fetchall()
    finally:
        con.close()
    published = {r[0]: r for r in rows}
    for suite in SUITES:
        assert suite.check_name in published, f"{suite.check_name} missing from the published check_results"
        _, target, severity, passed = published[suite.check_name]
        assert (target, severity, passed) == (suite.target, suite.severity, True)


# -- blocking suites fail on doctored frames --------------------------------------------------------

def _violate(df: pd.DataFrame, cls_name: str, kw: dict) -> pd.DataFrame:
    """A copy of df that breaks exactly this expectation (on its first row)."""
    out = df.copy()
    if cls_name in ("ExpectColumnValuesToBeUnique", "ExpectCompoundColumnsToBeUnique"):
        return pd.concat([out, out.iloc[[0]]], ignore_index=True)
    if cls_name == "ExpectColumnValuesToNotBeNull":
        out[kw["column"]] = out[kw["column"]].astype(object)
        out.loc[0, kw["column"]] = None
    elif cls_name == "ExpectColumnValuesToBeInSet":
        out[kw["column"]] = out[kw["column"]].astype(object)
        out.loc[0, kw["column"]] = "XXX-not-in-set"
    elif cls_name == "ExpectColumnValuesToMatchRegex":
        out[kw["column"]] = out[kw["column"]].astype(object)
        out.loc[0, kw["column"]] = "no match !"
    elif cls_name == "ExpectColumnValuesToBeBetween":
        col = kw["column"]
        out[col] = out[col].astype(float)
        out.loc[0, col] = (kw["min_value"] - 1) if kw.get("min_value") is not None else kw["max_value"] + 1
    elif cls_name == "ExpectColumnPairValuesAToBeGreaterThanB":
        a, b = kw["column_A"], kw["column_B"]
        if pd.api.types.is_datetime64_any_dtype(out[b]):
            if pd.isna(out.loc[0, b]):
                out.loc[0, b] = pd.Timestamp("2025-01-02")
            out.loc[0, a] = out.loc[0, b] - pd.Timedelta(days=1)
        else:
            out[a], out[b] = out[a].astype(float), out[b].astype(float)
            if pd.isna(out.loc[0, b]):
                out.loc[0, b] = 10.0
            out.loc[0, a] = out.loc[0, b] - 1
    else:
        raise AssertionError(f"no doctoring for {cls_name}")
    return out


_BLOCKING_CASES = [(s, i) for s in BLOCKING for i in range(len(s.expectations))]


@pytest.mark.e2e
@pytest.mark.parametrize(("suite", "index"), _BLOCKING_CASES,
                         ids=[f"{s.check_name}-{i}-{s.expectations[i][0]}" for s, i in _BLOCKING_CASES])
def test_blocking_suite_fails_on_a_doctored_frame(sample_run: dict, suite: Suite, index: int) -> None:
    cls_name, kw = suite.expectations[index]
    df = _frame(sample_run, suite)
    assert len(df) > 0, f"{suite.target} is empty in the sample run: nothing to doctor"
    passed, failures = validate(suite, _violate(df, cls_name, kw))
    assert not passed
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", cls_name).lower()
    assert any(f.startswith(snake) for f in failures), failures


@pytest.mark.e2e
def test_named_doctorings_fail_their_blocking_suites(sample_run: dict) -> None:
    by_name = {s.check_name: s for s in SUITES}
    ledger = by_name["gx_ledger_focus"]
    focus = _frame(sample_run, ledger)
    focus.loc[3, "x_gpu_hours"] = -2.0
    passed, failures = validate(ledger, focus)
    assert not passed and any("x_gpu_hours" in f and "between" in f for f in failures), failures

    prices = by_name["gx_fct_gpu_price_history"]
    history = _frame(sample_run, prices)
    history.loc[0, "valid_to"] = history.loc[0, "valid_from"] - pd.Timedelta(days=1)
    passed, failures = validate(prices, history)
    assert not passed and any("valid_to" in f and "greater_than" in f for f in failures), failures

    chargeback = by_name["gx_fct_chargeback_monthly"]
    lines = _frame(sample_run, chargeback)
    lines.loc[0, "currency"] = "ZZZ"
    passed, failures = validate(chargeback, lines)
    assert not passed and any("currency" in f and "ZZZ" in f for f in failures), failures


# -- tables without rows: GX runs only what can still fail there -------------------------------------

@pytest.mark.e2e
def test_gx_passes_every_row_rule_on_a_table_without_rows(sample_run: dict) -> None:
    """`validate` leaves the row rules out on a frame without rows (runner.to_validate): GX itself, given
    every row rule of every suite on that suite's columns with their real types and no rows, passes them all."""
    kinds = set()
    for suite in SUITES:
        rules = [e for e in suite.expectations if e[0] in ROW_RULES]
        kinds |= {cls_name for cls_name, _ in rules}
        if rules:
            df = _frame(sample_run, suite).iloc[0:0]
            assert gx_validate(suite.check_name, rules, df) == (True, []), suite.check_name
    assert kinds == ROW_RULES  # every kind left out is a kind tried here


def test_a_table_without_rows_still_has_its_column_types_and_columns_checked() -> None:
    suite = Suite("t", (("ExpectColumnValuesToBeBetween", {"column": "price", "min_value": 0}),
                        ("ExpectColumnValuesToNotBeNull", {"column": "gpu"}),
                        ("ExpectColumnValuesToBeInTypeList", {"column": "price", "type_list": ["float64"]})))
    empty = pd.DataFrame({"price": pd.Series([], dtype="float64"), "gpu": pd.Series([], dtype=object)})
    assert to_validate(suite, empty) == [suite.expectations[2]]  # the type rule only
    assert to_validate(suite, pd.DataFrame({"price": [1.0], "gpu": ["H100"]})) == list(suite.expectations)
    assert validate(suite, empty) == (True, [])
    # A wrong type on an empty table fails (GX ran the type rule) ...
    passed, failures = validate(suite, empty.astype({"price": "int64"}))
    assert not passed and failures[0].startswith("expect_column_values_to_be_in_type_list"), failures
    # ... and so does a rule on a column the table lacks, row rule or not.
    passed, failures = validate(suite, empty.drop(columns="gpu"))
    assert not passed and any("not_be_null" in f and "gpu" in f for f in failures), failures
    no_type_rule = Suite("t", suite.expectations[:2])
    assert to_validate(no_type_rule, empty) == [] and validate(no_type_rule, empty) == (True, [])


def test_decimal_columns_are_compared_as_numbers() -> None:
    from decimal import Decimal

    suite = Suite("t", (("ExpectColumnValuesToBeBetween", {"column": "price", "min_value": 0}),))
    assert validate(suite, pd.DataFrame({"price": [Decimal("1.10"), Decimal("2.00")]}))[0]
    assert not validate(suite, pd.DataFrame({"price": [Decimal("1.10"), Decimal("-0.01")]}))[0]


def test_percentages_allow_float_rounding_at_the_bounds_only() -> None:
    """100.00000000000001 (a quotient of sums on Spark) is 100 %; 100.01 is not a percentage."""
    from warehouse.expectations import percent

    suite = Suite("t", percent("utilisation_pct"))
    assert validate(suite, pd.DataFrame({"utilisation_pct": [0.0, 55.5, 100.00000000000001]}))[0]
    assert not validate(suite, pd.DataFrame({"utilisation_pct": [100.01]}))[0]
    assert not validate(suite, pd.DataFrame({"utilisation_pct": [-0.01]}))[0]


# -- big tables: bounded, deterministic, and still exact about bad rows ---------------------------

@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gx_big") / "big.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema marts")
    con.execute("""create table marts.t as select 'k' || i as id, 'USD' as currency,
                   (i % 97 + 1)::decimal(38,12) as price from range(250000) r(i)""")
    con.close()
    return path


SMALL = Suite("t", (
    ("ExpectColumnValuesToNotBeNull", {"column": "id"}),
    ("ExpectColumnValuesToBeUnique", {"column": "id"}),
    ("ExpectColumnValuesToBeInSet", {"column": "currency", "value_set": ["USD", "EUR"]}),
    ("ExpectColumnValuesToBeBetween", {"column": "price", "min_value": 0, "strict_min": True}),
), sample_rows=20_000)


def test_big_table_is_sampled_deterministically(big_db: Path) -> None:
    con = duckdb.connect(str(big_db), read_only=True)
    try:
        first, meta = read_frame(con, SMALL)
        second, _ = read_frame(con, SMALL)
    finally:
        con.close()
    assert meta["rows"] == 250_000 and meta["rows_validated"] == len(first) == 20_000
    assert "using sample 20000 rows (smallest hash of the row key, seed 42)" in meta["sampled"]
    pd.testing.assert_frame_equal(first, second)
    assert validate(SMALL, first)[0]


def test_the_sample_is_spread_over_the_whole_table(big_db: Path) -> None:
    """Drawn on a hash of the row, not the first rows read: each quarter of the 250,000 ids holds
    a quarter of the 20,000 sampled rows (5,000 expected; binomial sd ~61, so 4,500-5,500 is 8 sd)."""
    con = duckdb.connect(str(big_db), read_only=True)
    try:
        df, _ = read_frame(con, SMALL)
    finally:
        con.close()
    ids = df["id"].str.removeprefix("k").astype(int)
    quarters = (ids // 62_500).value_counts().sort_index().tolist()
    assert len(quarters) == 4 and all(4_500 <= q <= 5_500 for q in quarters), quarters


@pytest.mark.parametrize("doctor", [
    "update marts.t set id = 'k5' where id = 'k123456'",   # one duplicated key in 250k rows
    "update marts.t set price = -3 where id = 'k200001'",  # one negative price
    "update marts.t set currency = 'XXX' where id = 'k77'",  # one unknown currency
    "update marts.t set id = null where id = 'k9'",  # one null key
])
def test_a_single_bad_row_in_a_big_table_fails_the_suite(big_db: Path, tmp_path: Path, doctor: str) -> None:
    path = tmp_path / "doctored.duckdb"
    path.write_bytes(big_db.read_bytes())
    con = duckdb.connect(str(path))
    try:
        con.execute(doctor)
        df, meta = read_frame(con, SMALL)
    finally:
        con.close()
    assert meta["rows_validated"] < 25_000
    passed, failures = validate(SMALL, df)
    assert not passed, f"{doctor} went unnoticed"
    assert len(failures) == 1, failures


def test_a_missing_column_fails_its_expectation(big_db: Path) -> None:
    suite = replace(SMALL, expectations=(*SMALL.expectations, ("ExpectColumnValuesToNotBeNull", {"column": "nope"})))
    con = duckdb.connect(str(big_db), read_only=True)
    try:
        df, meta = read_frame(con, suite)
    finally:
        con.close()
    assert meta["missing_columns"] == "nope"
    passed, failures = validate(suite, df)
    assert not passed and any("nope" in f for f in failures), failures


def test_one_scan_per_predicate_reads_the_same_frame(big_db: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A big table's suspects found one predicate at a time (runner.SPLIT_SCAN_ROWS) are the rows the one
    scan finds. Doctored: 1,500 negative prices, three currencies outside the set (one of them on a row with a
    negative price too: found by two predicates, kept once) and a null id, so 1,503 suspect rows. The
    sample holds ~1,503 x 20,000 / 250,000 = ~120 of them, so more than SUSPECT_ROWS = 1,000 are left:
    20,000 sampled + 1,000 suspects = 21,000 rows either way."""
    import warehouse.expectations.runner as runner

    path = tmp_path / "doctored.duckdb"
    path.write_bytes(big_db.read_bytes())
    con = duckdb.connect(str(path))
    try:
        con.execute("update marts.t set price = -1 where id in (select 'k' || (i * 150 + 7) from range(1500) r(i))")
        # three rows in a currency outside the suite's set (USD, EUR); k7 has a price of -1 too
        con.execute("update marts.t set currency = 'JPY' where id in ('k7', 'k100001', 'k249998')")
        con.execute("update marts.t set id = null where id = 'k31'")
        frames = {}
        for split in (False, True):
            monkeypatch.setattr(runner, "SPLIT_SCAN_ROWS", 1 if split else 10**12)
            frames[split], meta = read_frame(con, SMALL)
            assert meta["rows_validated"] == 21_000, (split, meta["sampled"])
    finally:
        con.close()
    pd.testing.assert_frame_equal(frames[False], frames[True])
    assert not validate(SMALL, frames[True])[0]


# -- Dagster: severity and position of every check --------------------------------------------------

def test_checks_carry_each_suites_severity_upstream_of_the_publication() -> None:
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    publication = dg.AssetKey(["serving", "publication"])
    upstream: set[dg.AssetKey] = set()
    frontier = [publication]
    while frontier:
        for parent in graph.get(frontier.pop()).parent_keys:
            if parent not in upstream:
                upstream.add(parent)
                frontier.append(parent)
    for suite in SUITES:
        key = dg.AssetCheckKey(dg.AssetKey(list(suite.key)), suite.check_name)
        assert key in graph.asset_check_keys, f"no Dagster check for {suite.check_name}"
        spec = graph.get_check_spec(key)
        assert spec.blocking == suite.blocking, suite.check_name
        if suite.blocking:
            assert spec.asset_key in upstream, f"{suite.check_name} targets {spec.asset_key}, not upstream of publication"
