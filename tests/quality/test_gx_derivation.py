"""Where the GX suites come from: raw suites take asset, columns and types from the raw table
contracts; mart suites hold nothing a dbt test on the same model and column already says (the rule
in warehouse.expectations.dbt_tests, applied to the dbt manifest)."""

import copy
import json
from dataclasses import replace

import duckdb
import pandas as pd
import pytest

from warehouse.expectations import MART_SUITES, RAW_SUITES, Suite, not_null, read_frame, unique, validate
from warehouse.expectations.dbt_tests import covering_test, dbt_tests, restated, without_restated
from warehouse.expectations.dsl import between, known_currency, named, percent, positive, unique_together
from warehouse.expectations.suites_raw import TYPE_EXPECTATION, declared_types, pandas_types, raw
from warehouse.raw import contracts


@pytest.fixture(scope="module")
def manifest() -> dict:
    from pipelines.dbt_project import parse_manifest

    return json.loads(parse_manifest().read_text())


# -- marts: no restatement of a dbt test ----------------------------------------------------------

def test_no_mart_expectation_restates_a_dbt_test(manifest: dict) -> None:
    found = restated(MART_SUITES, manifest)
    assert not found, "GX mart expectations that only restate a dbt test (drop them from suites_mart.py):\n" + "\n".join(
        f"{s.check_name}: {cls}({ {k: v for k, v in kw.items() if k != 'value_set'} }) = dbt {t}"
        for s, (cls, kw), t in found)


def test_every_mart_suite_still_checks_something(manifest: dict) -> None:
    for suite in MART_SUITES:
        assert suite.expectations, f"{suite.check_name} has no expectation left"
        assert without_restated(suite, manifest) == suite


def test_the_rule_finds_restated_expectations_again(manifest: dict) -> None:
    """Re-adding what dbt tests (keys, not-nulls, known currencies, price > 0) is caught, per model."""
    by_table = {s.table: s for s in MART_SUITES}
    readded = {
        "ledger_focus": unique("x_charge_key"),
        "fct_chargeback_monthly": (*not_null("team_id", "total_cost"),
                                   unique_together("team_id", "billing_period_start", "currency")),
        "fct_price_quotes": (known_currency("currency"), *positive("price")),
    }
    for table, extra in readded.items():
        suite = replace(by_table[table], expectations=by_table[table].expectations + tuple(extra))
        found = [e for _, e, _ in restated((suite,), manifest)]
        assert found == list(extra), (table, found)


def test_only_a_dbt_test_at_least_as_strict_covers(manifest: dict) -> None:
    chargeback = next(s for s in MART_SUITES if s.table == "fct_chargeback_monthly")
    uid = next(u for u, n in manifest["nodes"].items() if n["resource_type"] == "test"
               and n.get("attached_node") == "model.gpu_ledger.fct_chargeback_monthly"
               and (n.get("test_metadata") or {}).get("name") == "column_constraints")
    # team_id declares `constraints: [{type: not_null}]`; the model's one column_constraints test checks it
    assert {"type": "not_null"}.items() <= manifest["nodes"]["model.gpu_ledger.fct_chargeback_monthly"][
        "columns"]["team_id"]["constraints"][0].items()
    expectation = not_null("team_id")[0]
    assert covering_test(chargeback, expectation, dbt_tests(manifest, "marts", chargeback.table)) is not None

    def with_config(**config: object) -> list:
        m = copy.deepcopy(manifest)
        m["nodes"][uid]["config"].update(config)
        return [t for t in dbt_tests(m, "marts", chargeback.table) if t.unique_id == uid]

    assert not with_config(where="team_id <> 'x'"), "a filtered dbt test covers only part of the rows"
    assert not with_config(error_if=">10"), "a dbt test that tolerates failures is weaker"
    warn = with_config(severity="warn")
    assert covering_test(chargeback, expectation, warn) is None, "a dbt warning cannot stand in for a blocking GX check"
    assert covering_test(replace(chargeback, blocking=False), expectation, warn) is not None
    # the same dbt test says nothing about another model of the same name elsewhere
    assert not dbt_tests(manifest, "staging", chargeback.table)


def test_bounds_and_sets_are_compared_not_matched_by_name() -> None:
    def test_node(kind: str, **kwargs: object) -> dict:
        return {"resource_type": "test", "attached_node": "model.p.m", "column_name": "c",
                "test_metadata": {"name": kind, "kwargs": {"column_name": "c", **kwargs}}, "config": {}}

    def covered(expectation: tuple, node: dict) -> bool:
        m = {"nodes": {"model.p.m": {"resource_type": "model", "name": "m", "schema": "marts"}, "test.p.t": node}}
        return covering_test(Suite("m", (expectation,)), expectation, dbt_tests(m, "marts", "m")) is not None

    pct = percent("c")[0]
    assert covered(pct, test_node("value_between", min_value=0, max_value=100))
    assert not covered(pct, test_node("value_between", min_value=0))  # no upper bound in dbt
    assert not covered(pct, test_node("value_between", min_value=0, max_value=150))
    assert covered(between("c", 0), test_node("value_between", min_value=0))
    assert covered(between("c", 0), test_node("greater_than_zero"))
    assert not covered(positive("c")[0], test_node("value_between", min_value=0))  # 0 passes dbt
    assert covered(positive("c")[0], test_node("greater_than_zero"))
    in_ab = ("ExpectColumnValuesToBeInSet", {"column": "c", "value_set": ["a", "b"]})
    assert covered(in_ab, test_node("accepted_values", values=["a"]))
    assert not covered(in_ab, test_node("accepted_values", values=["a", "z"]))
    assert not covered(("ExpectColumnValuesToMatchRegex", {"column": "c", "regex": "^a"}), test_node("not_null"))


# -- raw: derived from the contracts ----------------------------------------------------------------

def test_raw_suites_attach_to_their_contract_family() -> None:
    for suite in RAW_SUITES:
        assert suite.key == ("raw", contracts()[suite.table]["family"]), suite.check_name


def test_raw_suites_type_every_column_they_read_from_the_contract() -> None:
    for suite in RAW_SUITES:
        types = {kw["column"]: kw["type_list"] for cls, kw in suite.expectations if cls == TYPE_EXPECTATION}
        hand = [c for cls, kw in suite.expectations if cls != TYPE_EXPECTATION for c in named(kw)]
        assert set(types) == set(hand) == set(suite.columns()), suite.check_name
        declared = declared_types(suite.table)
        assert all(types[c] == pandas_types(declared[c]) for c in types), suite.check_name


def test_every_contract_type_has_a_pandas_dtype() -> None:
    for table in contracts():
        for column, typ in declared_types(table).items():
            assert pandas_types(typ), (table, column, typ)


def test_a_column_the_contract_does_not_declare_is_refused() -> None:
    with pytest.raises(ValueError, match="does not declare"):
        raw("gpu_jobs", not_null("no_such_column"))


def test_a_raw_table_whose_types_drifted_from_its_contract_fails() -> None:
    """A raw table created under an older contract keeps its types (`create table if not exists`)."""
    suite = next(s for s in RAW_SUITES if s.table == "gpu_price_observations")
    con = duckdb.connect()
    try:
        con.execute("create schema raw")
        cols = {c: t for c, t in declared_types(suite.table).items() if c in suite.columns()}
        good = ", ".join(f'"{c}" {t}' for c, t in cols.items())
        con.execute(f"create table raw.{suite.table} ({good})")
        con.execute(f"insert into raw.{suite.table} (price, currency, observed_at, source, provider, sku, gpu_count) "
                    "values (2.5, 'USD', '2025-01-01', 's', 'p', 'sku', 8), (3.5, 'EUR', '2025-01-02', 's', 'p', 'sku', null)")
        assert validate(suite, read_frame(con, suite)[0]) == (True, [])
        con.execute(f"alter table raw.{suite.table} alter price type varchar")
        passed, failures = validate(suite, read_frame(con, suite)[0])
    finally:
        con.close()
    assert not passed and any(f.startswith("expect_column_values_to_be_in_type_list(column=price") for f in failures), failures


def test_nullable_integers_keep_their_type_in_a_sampled_frame() -> None:
    suite = Suite("t", (*not_null("n"), (TYPE_EXPECTATION, {"column": "n", "type_list": pandas_types("BIGINT")})),
                  schema="raw", sample_rows=100)
    con = duckdb.connect()
    try:
        con.execute("create schema raw")
        con.execute("create table raw.t as select i::bigint as n from range(5000) r(i)")
        con.execute("update raw.t set n = null where n = 77")
        df, meta = read_frame(con, suite)
    finally:
        con.close()
    assert meta["rows_validated"] == 101 and isinstance(df, pd.DataFrame)
    passed, failures = validate(suite, df)
    assert failures == ["expect_column_values_to_not_be_null(column=n): 1 unexpected, e.g. [<NA>]"]
