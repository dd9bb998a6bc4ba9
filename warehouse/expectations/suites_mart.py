"""Mart suites: only what the dbt tests on the marts do not already say.

dbt's generic tests (dbt/models/marts/**.yml) hold the keys, not-nulls, accepted values, known
currencies and most bounds of the marts, and an error-severity dbt failure withholds the
publication. These suites keep the rest: pairs in order, shares and percentages within their
range, counts and amounts never negative, not-nulls and currency sets dbt does not test. Before
issue 15 they restated 118 dbt tests; `dbt_tests.restated` is the rule and tests/quality fails when
an expectation here restates a dbt test again. When a dbt test is removed, its GX twin is not
restored by itself: add the expectation here (the rule then lets it stay).

Four suites are blocking (the ledger, the chargeback, unit costs and the price history): a failure
withholds the publication; the others are published as warnings on the data-quality page.
"""

from __future__ import annotations

from sources.registry.workloads import WORKLOAD_TYPES
from warehouse.reference import FOCUS_ENUMS

from .dsl import (Suite, between, in_set, known_currency, latency_order, mart, non_negative, not_null, ordered, percent,
                  positive, ratio)

CHARGE_CATEGORIES = FOCUS_ENUMS["ChargeCategory"]


def build_mart_suites() -> tuple[Suite, ...]:
    return (
        # -- blocking: the ledger, the chargeback, unit costs and the price history --------------
        mart("ledger_focus",
             not_null("BilledCost", "ChargePeriodStart", "x_source_file"),
             known_currency("BillingCurrency"),
             in_set("ChargeCategory", CHARGE_CATEGORIES),
             ordered("ChargePeriodStart", "ChargePeriodEnd"),
             non_negative("x_gpu_count", "x_gpu_hours"),
             blocking=True),
        mart("fct_chargeback_monthly",
             not_null("direct_cost", "shared_cost", "idle_cost"),
             known_currency("currency"),
             non_negative("charge_lines"),
             blocking=True),
        mart("fct_workload_unit_cost",
             not_null("period", "basis", "currency"),
             known_currency("currency"),
             non_negative("effective_unit_cost", "naive_unit_cost", "cost_per_accepted_second",
                          "produced_outputs", "accepted_outputs"),
             blocking=True),
        mart("fct_gpu_price_history",
             ordered("valid_from", "valid_to"),
             ordered("first_observed_at", "last_observed_at"),
             blocking=True),
        # -- warnings: published and shown on the data-quality page -----------------------------
        mart("dim_gpu",
             positive("memory_gb"),
             non_negative("current_usd_on_demand_offers")),
        mart("dim_team",
             known_currency("budget_currency"),
             non_negative("budget_monthly")),
        mart("dim_workload",
             not_null("team_id", "workload_type"),
             in_set("workload_type", WORKLOAD_TYPES)),
        mart("fct_api_cost_reports_daily",
             not_null("day", "provider", "cost"),
             known_currency("currency")),
        mart("fct_api_prices",
             not_null("currency"),
             known_currency("currency"),
             non_negative("input_cost_per_1m_tokens", "output_cost_per_1m_tokens", "cache_read_cost_per_1m_tokens"),
             ordered("valid_from", "valid_to")),
        mart("fct_api_spend_daily",
             known_currency("currency"),
             non_negative("cost", "failed_cost", "requests", "failed", "input_tokens", "output_tokens"),
             ordered("failed", "requests")),
        mart("fct_benchmark_runs",
             latency_order("p50", "p99"),
             non_negative("completed", "failed"),
             ratio("accepted_ratio", "estimated_accepted_share")),
        mart("fct_billing_savings",
             known_currency("BillingCurrency"),
             non_negative("x_charge_lines", "x_lines_missing_list_cost", "x_lines_missing_contracted_cost")),
        mart("fct_commitment_utilisation",
             known_currency("BillingCurrency"),
             non_negative("x_used_cost", "x_unused_cost", "x_charge_lines")),
        mart("fct_candidate_comparison",
             not_null("currency"),
             known_currency("currency"),
             non_negative("monthly_cost", "effective_unit_cost"),
             ratio("quality_acceptance")),
        mart("fct_capacity_options",
             not_null("currency"),
             known_currency("currency"),
             non_negative("monthly_cost", "gpus_needed"),
             ratio("break_even_utilisation", "measured_utilisation")),
        mart("fct_eval_runs",
             non_negative("gpu_hours", "tasks_completed", "tasks_failed"),
             ordered("started_at", "ended_at")),
        mart("fct_gpu_failed_jobs",
             non_negative("used_gpu_hours"),
             percent("gpu_util_pct")),
        mart("fct_gpu_idle_daily",
             not_null("day"),
             non_negative("billed_gpu_hours")),
        mart("fct_gpu_offers_current",
             known_currency("currency"),
             positive("price_per_gpu_hour")),
        mart("fct_gpu_utilisation_daily",
             non_negative("billed_gpu_hours", "used_gpu_hours")),
        mart("fct_media_batches",
             non_negative("gpu_hours", "produced", "accepted"),
             ordered("accepted", "produced"),
             ratio("accepted_ratio")),
        mart("fct_memory_fit",
             positive("required_gb", "available_gb")),
        mart("fct_memory_fit_tests",
             percent("fragmentation_pct"),
             non_negative("oom_count", "peak_memory_gb")),
        # Every former expectation here (key, not-nulls, currency, price > 0) is a dbt test; what
        # dbt does not test of a quote: its GPU count, term and commitment are never negative.
        mart("fct_price_quotes",
             non_negative("gpu_count", "term_months", "minimum_commitment")),
        mart("fct_quality_outcomes_daily",
             non_negative("produced", "accepted"),
             ordered("accepted", "produced"),
             ratio("accepted_ratio")),
        # Bill vs list price (issue 19): dbt tests the key and the flag vocabulary.
        mart("fct_bill_vs_list_price",
             known_currency("currency"),
             positive("gpu_hours", "list_per_gpu_hour")),
        # Chargeback -> showback bridge and budgets: dbt tests their keys and not-nulls.
        mart("fct_cost_bridge",
             known_currency("currency"),
             between("step_order", 1, 9),
             in_set("step_kind", ("start", "add", "subtotal", "total"))),
        mart("fct_showback_monthly",
             known_currency("currency"),
             non_negative("cost_lines")),
        mart("fct_team_budget_monthly",
             known_currency("currency"),
             non_negative("budget_monthly")),
        mart("fct_bill_rate_check",
             known_currency("currency"),
             non_negative("gpu_hours", "lines")),
        mart("fct_unmatched_team_tags",
             known_currency("currency"),
             non_negative("lines")),
        mart("fct_billing_held_out",
             non_negative("lines_held_out", "first_line")),
        mart("fct_unpriced_usage",
             known_currency("currency"),
             non_negative("rate_per_gpu_hour", "work_items")),
        mart("fct_training_runs",
             non_negative("gpu_hours", "restarts"),
             ordered("started_at", "ended_at")),
        mart("fct_workload_cost_lines",
             not_null("workload_id", "period", "component", "amount", "currency"),
             known_currency("currency")),
        # FOCUS 1.3 export (issue 22): dbt tests the key and the partition of the ledger.
        mart("fct_focus_export",
             known_currency("BillingCurrency"),
             in_set("ChargeCategory", FOCUS_ENUMS["ChargeCategory"]),
             in_set("AllocatedMethodId", ("proportional-direct-cost", "proportional-used-gpu-hours", "owner",
                                          "separate-idle"))),
        # Anomalies and forecasts (issue 21): dbt tests the keys, not-nulls and direction vocabulary.
        mart("fct_cost_anomalies",
             known_currency("currency"),
             positive("scaled_mad"),
             ordered("expected_low", "expected_high")),
        mart("fct_anomaly_coverage",
             known_currency("currency"),
             ordered("scored_days", "series_days")),
        mart("fct_anomaly_daily",
             known_currency("currency"),
             ordered("expected_low", "expected_high"),
             non_negative("history_days")),
        mart("fct_spend_forecast",
             known_currency("currency"),
             between("horizon", 0, 3),
             ordered("forecast_low", "forecast_high")),
    )
