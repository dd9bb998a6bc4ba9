"""Which GX expectations restate a dbt test: the rule, applied to the dbt manifest.

dbt's tests (`unique_combination`, `accepted_values`, and `column_constraints`, which checks the
columns' `not_null` / `unique` constraints, their value checks kept in column meta -- read here as
the tests they replaced: `accepted_values`, `value_between`, `greater_than_zero`, `currency_is_known`
-- and the model-level unique keys) already guard the marts inside `dbt build`, where an
error-severity failure withholds the publication. A GX mart expectation that
says the same thing about the same model and column only doubles the work and the places to edit,
so the mart suites keep what dbt does not test; tests/quality asserts that none of them is
`covered` by a dbt test (re-adding one fails that test).

An expectation counts as covered only when the dbt test is at least as strict: same model (in the
suite's schema) and column(s); a set no wider, bounds no looser (within FLOAT_TOLERANCE, the rounding
slack both sides allow); no `where` filter and the default failure threshold; and, for a blocking
suite, severity `error`. Reading the manifest never runs dbt: pass it in, or `load_manifest()` reads
the file `dbt parse` wrote (`pipelines.dbt_project.parse_manifest()` makes it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse.reference import CURRENCIES

from .dsl import FLOAT_TOLERANCE, Expectation, Suite

#: The dbt tests the rule understands, as nodes or as column_constraints rules (others, and singular
#: tests, cover nothing here).
KNOWN_TESTS = ("not_null", "unique", "unique_combination", "accepted_values", "currency_is_known",
               "value_between", "greater_than_zero", "column_constraints")
#: Column constraint types the `column_constraints` test checks (dbt/macros/test_column_constraints.sql).
CONSTRAINT_TESTS = ("not_null", "unique")
#: Column value checks (`config: {meta: {checks: {...}}}`) it checks, named and argued as the generic tests.
CHECK_TESTS = ("accepted_values", "value_between", "greater_than_zero", "currency_is_known")
_SLACK = FLOAT_TOLERANCE + 1e-12


@dataclass(frozen=True)
class DbtTest:
    unique_id: str
    kind: str
    columns: tuple[str, ...]  # normalised: unquoted, case-folded
    kwargs: dict[str, Any]
    severity: str

    def __str__(self) -> str:
        return self.unique_id


def load_manifest(path: Path | None = None) -> dict[str, Any]:
    """The dbt manifest as written by `dbt parse` (default: the project's target/manifest.json)."""
    if path is None:
        from warehouse.home import DBT_DIR

        path = DBT_DIR / "target" / "manifest.json"
    return json.loads(Path(path).read_text())


def _col(name: str) -> str:
    return name.strip().strip('"`').casefold()


def dbt_tests(manifest: dict[str, Any], schema: str, model: str) -> list[DbtTest]:
    """The enabled, unfiltered generic dbt tests attached to one model of one schema."""
    node_ids = {uid for uid, n in manifest["nodes"].items()
                if n["resource_type"] == "model" and n["name"] == model and n["schema"] == schema}
    constrained = _constraint_tests(manifest, node_ids)
    out = []
    for uid, n in manifest["nodes"].items():
        meta = n.get("test_metadata") or {}
        if n["resource_type"] != "test" or n.get("attached_node") not in node_ids or meta.get("name") not in KNOWN_TESTS:
            continue
        config = n.get("config") or {}
        if not config.get("enabled", True) or config.get("where") or config.get("limit") is not None:
            continue
        if any(str(config.get(k, "!= 0")).replace(" ", "") != "!=0" for k in ("error_if", "warn_if")):
            continue
        severity = str(config.get("severity", "error")).lower()
        if meta["name"] == "column_constraints":  # its own fail_calc counts offending rows
            out += [DbtTest(uid, kind, cols, kwargs, severity) for kind, cols, kwargs in constrained[n["attached_node"]]]
            continue
        if str(config.get("fail_calc", "count(*)")).replace(" ", "") != "count(*)":
            continue
        kwargs = meta.get("kwargs") or {}
        cols = kwargs.get("columns") if meta["name"] == "unique_combination" else [n.get("column_name")]
        if not cols or any(not isinstance(c, str) for c in cols):
            continue
        out.append(DbtTest(uid, meta["name"], tuple(_col(c) for c in cols), kwargs, severity))
    return out


def _constraint_tests(manifest: dict[str, Any],
                      node_ids: set[str]) -> dict[str, list[tuple[str, tuple[str, ...], dict[str, Any]]]]:
    """node id -> (test kind, columns, arguments) for each rule the `column_constraints` test checks: a
    column's not_null / unique, its value checks (read as the generic test of the same name), and a
    model-level unique key (what `unique_combination` checked)."""
    out: dict[str, list[tuple[str, tuple[str, ...], dict[str, Any]]]] = {uid: [] for uid in node_ids}
    for uid in node_ids:
        node = manifest["nodes"][uid]
        for col in node.get("columns", {}).values():
            for constraint in col.get("constraints") or ():
                if constraint.get("type") in CONSTRAINT_TESTS:
                    out[uid].append((constraint["type"], (_col(col["name"]),), {}))
            for kind, arg in column_checks(col).items():
                if kind in CHECK_TESTS:
                    kwargs = {"values": list(arg)} if kind == "accepted_values" else dict(arg) if isinstance(arg, dict) else {}
                    out[uid].append((kind, (_col(col["name"]),), kwargs))
        for constraint in node.get("constraints") or ():
            if constraint.get("type") == "unique" and constraint.get("columns"):
                out[uid].append(("unique_combination", tuple(_col(c) for c in constraint["columns"]), {}))
    return out


def column_checks(col: dict[str, Any]) -> dict[str, Any]:
    """A manifest column's value checks (`config: {meta: {checks: ...}}`), which `column_constraints` runs."""
    meta = (col.get("config") or {}).get("meta") or col.get("meta") or {}
    return dict(meta.get("checks") or {})


def _low_covered(test: DbtTest, low: float | None, strict: bool) -> bool:
    if low is None:
        return True
    if test.kind == "greater_than_zero":  # fails on value <= 0
        return low <= 0
    dbt_min = test.kwargs.get("min_value")
    if dbt_min is None:
        return False
    floor = float(dbt_min) - float(test.kwargs.get("tolerance", FLOAT_TOLERANCE))  # dbt fails below this
    return floor > low if strict else floor >= low - _SLACK  # strict: dbt must reject `low` itself


def _high_covered(test: DbtTest, high: float | None, strict: bool) -> bool:
    if high is None:
        return True
    dbt_max = test.kwargs.get("max_value") if test.kind == "value_between" else None
    if dbt_max is None:
        return False
    ceiling = float(dbt_max) + float(test.kwargs.get("tolerance", FLOAT_TOLERANCE))
    return ceiling < high if strict else ceiling <= high + _SLACK


def _covers(test: DbtTest, cls_name: str, kw: dict[str, Any], tests: list[DbtTest]) -> bool:
    column = _col(kw["column"]) if "column" in kw else None
    if cls_name == "ExpectColumnValuesToNotBeNull":
        return test.kind == "not_null" and test.columns == (column,)
    if cls_name == "ExpectColumnValuesToBeUnique":
        return test.kind in ("unique", "unique_combination") and test.columns == (column,)
    if cls_name == "ExpectCompoundColumnsToBeUnique":
        wanted = {_col(c) for c in kw["column_list"]}
        if test.kind == "unique_combination":
            return set(test.columns) == wanted
        # A unique, never-null column makes any set of columns holding it unique too.
        return (test.kind == "unique" and test.columns[0] in wanted
                and any(t.kind == "not_null" and t.columns == test.columns for t in tests))
    if cls_name == "ExpectColumnValuesToBeInSet":
        if test.columns != (column,):
            return False
        allowed = set(kw["value_set"])
        if test.kind == "accepted_values":
            return set(test.kwargs.get("values") or ()) <= allowed
        return test.kind == "currency_is_known" and set(CURRENCIES) <= allowed
    if cls_name == "ExpectColumnValuesToBeBetween":
        return (test.kind in ("value_between", "greater_than_zero") and test.columns == (column,)
                and _low_covered(test, kw.get("min_value"), bool(kw.get("strict_min")))
                and _high_covered(test, kw.get("max_value"), bool(kw.get("strict_max"))))
    return False  # pairs in order, regexes, distributions: no dbt generic test says these


def covering_test(suite: Suite, expectation: Expectation, tests: list[DbtTest]) -> DbtTest | None:
    """The dbt test (among `tests`, those on the suite's model) that makes this expectation redundant."""
    cls_name, kw = expectation
    for test in tests:
        if suite.blocking and test.severity != "error":
            continue  # a dbt warning does not stop the publication; a blocking GX expectation does
        if _covers(test, cls_name, kw, tests):
            return test
    return None


def restated(suites: tuple[Suite, ...], manifest: dict[str, Any]) -> list[tuple[Suite, Expectation, DbtTest]]:
    """Every (suite, expectation, dbt test) where the expectation only restates the dbt test."""
    found = []
    for suite in suites:
        tests = dbt_tests(manifest, suite.schema, suite.table)
        for expectation in suite.expectations:
            test = covering_test(suite, expectation, tests)
            if test is not None:
                found.append((suite, expectation, test))
    return found


def without_restated(suite: Suite, manifest: dict[str, Any]) -> Suite:
    """The suite minus the expectations a dbt test already makes."""
    from dataclasses import replace

    tests = dbt_tests(manifest, suite.schema, suite.table)
    return replace(suite, expectations=tuple(e for e in suite.expectations if covering_test(suite, e, tests) is None))
