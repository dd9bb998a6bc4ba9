"""great-expectations suites, built in code (GX 1.x ephemeral context), run on DataFrames read
from DuckDB (GX's SQL datasource on DuckDB is broken upstream).

A suite is a list of expectations per published table; `blocking` suites stop the publication.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

import pandas as pd

CURRENCIES = ["USD", "EUR", "GBP", "CAD", "CNY", "JPY", "AUD", "INR", "CHF", "SEK", "NOK", "DKK", "SGD", "BRL"]


@dataclass(frozen=True)
class Suite:
    """One table's expectations: (GX expectation class name, kwargs) pairs."""

    table: str
    expectations: tuple[tuple[str, dict[str, Any]], ...]
    blocking: bool = True


SUITES: tuple[Suite, ...] = (
    Suite("ledger_focus", (
        ("ExpectColumnValuesToNotBeNull", {"column": "x_charge_key"}),
        ("ExpectColumnValuesToBeUnique", {"column": "x_charge_key"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "BilledCost"}),
        ("ExpectColumnValuesToBeInSet", {"column": "BillingCurrency", "value_set": CURRENCIES}),
        ("ExpectColumnValuesToNotBeNull", {"column": "ChargePeriodStart"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "x_source_file"}),
        ("ExpectColumnValuesToBeInSet", {"column": "ChargeCategory",
                                         "value_set": ["Usage", "Purchase", "Tax", "Credit", "Adjustment"]}),
    )),
    Suite("fct_chargeback_monthly", (
        ("ExpectColumnValuesToNotBeNull", {"column": "team_id"}),
        ("ExpectColumnValuesToBeInSet", {"column": "currency", "value_set": CURRENCIES}),
        ("ExpectCompoundColumnsToBeUnique", {"column_list": ["team_id", "billing_period_start", "currency"]}),
        ("ExpectColumnValuesToNotBeNull", {"column": "total_cost"}),
    )),
)


@cache
def _context() -> Any:
    import great_expectations as gx  # heavy import, only when a check runs

    ctx = gx.get_context(mode="ephemeral")
    try:
        from great_expectations.data_context.types.base import ProgressBarsConfig

        ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    except Exception:  # progress bars are cosmetic; older/newer GX may name this differently
        pass
    return ctx


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """GX compares numbers as floats; Decimal objects are converted for validation only."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object and out[col].map(lambda v: isinstance(v, Decimal)).any():
            out[col] = out[col].astype(float)
    return out


def validate(suite: Suite, df: pd.DataFrame) -> tuple[bool, list[str]]:
    """Run a suite on a DataFrame; returns (success, one line per failed expectation)."""
    import great_expectations as gx

    ctx = _context()
    name = f"suite_{suite.table}"
    try:
        source = ctx.data_sources.get(name)
    except Exception:
        source = ctx.data_sources.add_pandas(name)
    asset = source.add_dataframe_asset(f"{name}_{len(source.assets)}")
    batch = asset.add_batch_definition_whole_dataframe("all").get_batch(batch_parameters={"dataframe": _plain(df)})
    gx_suite = gx.ExpectationSuite(name=f"{name}_{len(source.assets)}")
    for cls_name, kwargs in suite.expectations:
        gx_suite.add_expectation(getattr(gx.expectations, cls_name)(**kwargs))
    result = batch.validate(gx_suite)
    failures = [
        f"{r.expectation_config.type}({', '.join(f'{k}={v}' for k, v in r.expectation_config.kwargs.items() if k != 'batch_id')}):"
        f" {r.result.get('unexpected_count', '?')} unexpected, e.g. {r.result.get('partial_unexpected_list', [])[:3]}"
        for r in result.results if not r.success
    ]
    return result.success, failures
