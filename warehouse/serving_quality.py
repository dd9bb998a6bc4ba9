"""Readers for the Data quality page's input gates: bills held out for want of a currency,
team tag values no registered team answers to, credentials redacted per file.

Same rules as `warehouse.serving`: one short read-only query each through `serving.query`, money kept as
Decimal with its currency, a table not published yet raises NotPublished (the page says so).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from warehouse.serving import query, require


def held_out_bills(path: Path) -> pd.DataFrame:
    """fct_billing_held_out: per file, account and period, the lines no currency could be given to."""
    require(path, "fct_billing_held_out")
    return query(path, "select * from fct_billing_held_out order by source_file, billing_period_start")


def unmatched_team_tags(path: Path) -> pd.DataFrame:
    """fct_unmatched_team_tags summed over months: each value, where its cost went, lines and cost."""
    require(path, "fct_unmatched_team_tags")
    return query(path, """
        select tag_key, tag_value, currency, charged_to, charged_by, sum(lines) as lines,
               sum(billed_cost) as billed_cost, sum(effective_cost) as effective_cost
        from fct_unmatched_team_tags
        group by all
        order by effective_cost desc nulls last, tag_value""")


def redactions_by_file(path: Path) -> pd.DataFrame:
    """source_files with at least one credential redacted at load: file, family, cells, where."""
    require(path, "source_files", ("redactions", "redacted_columns"))
    return query(path, """
        select family, source_file, format, redactions, redacted_columns, observed_at
        from source_files where redactions > 0 order by redactions desc, source_file""")
