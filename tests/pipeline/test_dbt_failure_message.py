"""A failed dbt build's error names what failed: the models that could not be built (with the last line of
dbt's message, e.g. a cast of a registry value) before the checks, so the user sees the cause in the error."""

from __future__ import annotations

from pipelines.defs.transform.assets import _node_errors


def test_errored_models_are_named_with_the_last_line_of_their_message() -> None:
    results = {"results": [
        {"unique_id": "model.gpu_ledger.fct_fx_rates_daily", "status": "error",
         "message": "Runtime Error in model fct_fx_rates_daily\n  Conversion Error: Could not convert string 'four' to INT32"},
        {"unique_id": "model.gpu_ledger.dim_gpu", "status": "success", "message": "OK"},
        {"unique_id": "test.gpu_ledger.assert_x.abc", "status": "error", "message": "skipped upstream"},
        {"unique_id": "seed.gpu_ledger.gpu_catalog", "status": "error", "message": ""},
    ]}
    assert _node_errors(results) == [
        "model fct_fx_rates_daily: Conversion Error: Could not convert string 'four' to INT32",
        "seed gpu_catalog: error"]
