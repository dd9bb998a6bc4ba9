"""great-expectations suites over raw tables and published marts, built in code.

`SUITES` is data: one `Suite` per table (two on raw.billing_charges), each naming the Dagster asset
its check targets (`raw/<family>` for raw tables, `marts/<table>` for marts) and its severity.
`blocking` suites stop the publication; the others are published as warnings on the dashboard's
data-quality page. `pipelines/defs/quality/checks.py` turns each suite into one asset check.

GX holds what the other layers do not:

- raw suites (`suites_raw`) take their asset, their allowed columns and their column types from the
  raw table contracts (warehouse/contracts/*.yaml) and add the row-level rules the contracts cannot
  state (not-null, sets, ranges, regexes, orderings);
- mart suites (`suites_mart`) keep only what the dbt tests on the marts do not already say;
  `dbt_tests.restated` is the rule that finds a restatement, tests/quality applies it to the
  manifest.

Modules: `dsl` (Suite and the expectation shorthands), `suites_raw`, `suites_mart`, `dbt_tests`,
`runner` (read a suite's rows, bounded and deterministic on big tables, and validate them).
Importing this package reads the contract YAML files; it never runs dbt or any other process.
"""

from __future__ import annotations

from warehouse.reference import CURRENCIES

from .dsl import (FLOAT_TOLERANCE, SAMPLE_ROWS, SAMPLE_SEED, Expectation, Suite, between, currency, in_set,
                  known_currency, matches, non_negative, not_null, ordered, percent, positive, ratio, unique,
                  unique_together)
from .runner import SUSPECT_ROWS, read_frame, run_suite, validate
from .suites_mart import build_mart_suites
from .suites_raw import build_raw_suites

RAW_SUITES: tuple[Suite, ...] = build_raw_suites()
MART_SUITES: tuple[Suite, ...] = build_mart_suites()
SUITES: tuple[Suite, ...] = RAW_SUITES + MART_SUITES

__all__ = [
    "CURRENCIES", "FLOAT_TOLERANCE", "MART_SUITES", "RAW_SUITES", "SAMPLE_ROWS", "SAMPLE_SEED", "SUITES",
    "SUSPECT_ROWS", "Expectation", "Suite", "between", "currency", "in_set", "known_currency", "matches",
    "non_negative", "not_null", "ordered", "percent", "positive", "ratio", "read_frame", "run_suite",
    "unique", "unique_together", "validate",
]
