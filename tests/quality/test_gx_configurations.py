"""GX validates the same with each expectation's configuration built once per `validate` call
(warehouse/expectations/gx_configurations.py) as with GX's own property: the same verdicts, counts and
unexpected values, on a frame that breaks every kind of rule the suites use."""

from __future__ import annotations

from typing import Any

import pandas as pd
from great_expectations.expectations.expectation import Expectation as GxExpectation

from warehouse.expectations.gx_configurations import configurations_built_once
from warehouse.expectations.runner import _frames, _gx

FRAME = pd.DataFrame({
    "team": ["a", "b", None, "zz", "a"],
    "cost": [1.5, -2.0, 3.0, 1e9, 1.5],
    "start": pd.to_datetime(["2025-04-01", "2025-04-02", "2025-04-03", "2025-04-05", "2025-04-01"]),
    "end": pd.to_datetime(["2025-04-02", "2025-04-01", "2025-04-04", "2025-04-06", "2025-04-02"]),
    "currency": ["USD", "EUR", "usd", "USD", "USD"],
})
RULES: list[tuple[str, dict[str, Any]]] = [
    ("ExpectColumnValuesToNotBeNull", {"column": "team"}),
    ("ExpectColumnValuesToBeInSet", {"column": "team", "value_set": ["a", "b"]}),
    ("ExpectColumnValuesToBeBetween", {"column": "cost", "min_value": 0, "max_value": 1000}),
    ("ExpectColumnPairValuesAToBeGreaterThanB", {"column_A": "end", "column_B": "start", "or_equal": False}),
    ("ExpectColumnValuesToMatchRegex", {"column": "currency", "regex": "^[A-Z]{3}$"}),
    ("ExpectCompoundColumnsToBeUnique", {"column_list": ["team", "cost", "start"]}),
    ("ExpectColumnValuesToBeInTypeList", {"column": "cost", "type_list": ["float64"]}),
]


def _results(cached: bool) -> list[dict[str, Any]]:
    gx, frames = _gx(), _frames()  # the data context first: a suite needs one
    suite = gx.ExpectationSuite(name="configurations_built_once")
    for cls_name, kwargs in RULES:
        suite.add_expectation(getattr(gx.expectations, cls_name)(**kwargs))
    batch = frames.get_batch(batch_parameters={"dataframe": FRAME})
    if cached:
        with configurations_built_once():
            result = batch.validate(suite, result_format="COMPLETE")
    else:
        result = batch.validate(suite, result_format="COMPLETE")
    return sorted(({"type": r.expectation_config.type, "kwargs": r.expectation_config.kwargs,
                    "success": r.success, "result": r.result} for r in result.results), key=repr)


def test_the_same_results_with_configurations_built_once() -> None:
    plain, cached = _results(False), _results(True)
    assert cached == plain
    # and not vacuously: all but the type rule are broken by the frame, with their rows counted
    assert [r["success"] for r in plain].count(False) == len(RULES) - 1
    assert all(r["result"].get("unexpected_count", 0) > 0 for r in plain if not r["success"])


def test_outside_the_block_gx_builds_a_new_configuration_per_read() -> None:
    gx, _ = _gx(), _frames()
    rule = gx.expectations.ExpectColumnValuesToNotBeNull(column="team")
    with configurations_built_once():
        assert rule.configuration is rule.configuration  # built once in the block
    assert rule.configuration is not rule.configuration  # GX's own: a new object on each read
    assert isinstance(rule, GxExpectation)
