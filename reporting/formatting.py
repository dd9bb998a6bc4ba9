"""How money and figures are shown: exact in files, rounded only on screen and paper."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any


def exact(value: Any) -> Any:
    """Decimals as plain fixed-point text ('0.000000000000', never '0E-12') for CSV and JSON; others as is."""
    return format(value, "f") if isinstance(value, Decimal) else value


def fmt_money(amount: Decimal | float | None, currency: str | None) -> str:
    """'USD 1,234.57': two decimals, half-up, only ever at display."""
    if amount is None or (isinstance(amount, float) and math.isnan(amount)):
        return "n/a"
    value = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{currency or ''} {value:,.2f}".strip()


def fmt_unit_cost(amount: Decimal | float | None, currency: str | None) -> str:
    """A cost per output: cents when it is at least 1, else 4 significant digits as a plain decimal
    ('USD 0.005508', 'USD 0.00002152'; never scientific notation)."""
    if amount is None or (isinstance(amount, float) and math.isnan(amount)):
        return "n/a"
    value = Decimal(str(amount))
    if abs(value) >= 1:
        return fmt_money(amount, currency)
    if value == 0:
        return f"{currency or ''} 0.00".strip()
    places = max(2, 3 - value.adjusted())  # 4 significant digits after the leading zeros
    return f"{currency or ''} {value:.{places}f}".strip()


# The three figures, named the same on every page, report and summary (docs/cost_model.md).
FIGURES = ("Invoice", "Chargeback", "All-in showback")
BASIS_LABELS = {"amortised": "amortised (FOCUS EffectiveCost: commitment fees spread over the usage they cover)",
                "billed": "billed (FOCUS BilledCost, as invoiced)"}


def basis_label(basis: str | None) -> str:
    """'amortised (FOCUS EffectiveCost: ...)'; an unknown or mixed basis is shown as given."""
    return BASIS_LABELS.get(basis or "", basis or "unknown")


def definition(figure: str, basis: str | None = None) -> str:
    """The one-line definition shown beside a figure."""
    return {
        "Invoice": "What the cloud provider bills: Σ FOCUS BilledCost.",
        "Chargeback": f"Invoice lines allocated to teams on the {basis or 'chosen'} basis, plus API invoices.",
        "All-in showback": "The unit-cost model's view: the amortised chargeback plus run-priced work, estimates, "
                           "labour and idle not on a bill.",
    }[figure]


# Human labels for chargeback / budget columns ({c} = currency).
COLUMN_LABELS = {
    "team_id": "Team", "billing_period_start": "Month", "period": "Month", "currency": "Currency",
    "basis": "Basis", "total_cost": "Chargeback ({c})", "billed_cost": "Invoice share, billed ({c})",
    "amortised_cost": "Amortised cost ({c})", "unused_commitment": "Unused commitment ({c})",
    "direct_cost": "Direct ({c})", "shared_cost": "Shared ({c})", "idle_cost": "Idle ({c})",
    "api_cost": "API spend ({c})", "credits": "Credits ({c})", "tax": "Tax ({c})",
    "budget_monthly": "Budget ({c})", "budget_remaining": "Budget left after chargeback ({c})",
    "forecast_month_end": "Month-end forecast ({c})", "charge_lines": "Charge lines", "effective_cost": "Effective cost ({c})",
    "chargeback_total": "Chargeback ({c})", "showback_total": "All-in showback ({c})",
    "budget_remaining_chargeback": "Budget left after chargeback ({c})",
    "budget_remaining_showback": "Budget left after all-in showback ({c})",
    # Workload unit costs and their components.
    "workload_id": "Workload", "workload_type": "Workload type", "unit_of_success": "Unit of success",
    "all_in_cost": "All-in cost ({c})", "gpu_compute": "GPU compute ({c})", "storage": "Storage ({c})",
    "network": "Network ({c})", "checkpointing": "Checkpointing ({c})", "serving_stack": "Serving stack ({c})",
    "observability": "Observability ({c})", "platform_labor": "Platform labour ({c})",
    "idle_capacity": "Idle capacity ({c})", "retry_waste": "Retry waste ({c})", "failure_waste": "Failure waste ({c})",
    "queue_overhead": "Queue overhead ({c})", "moderation_or_quality_filtering": "Moderation / quality filtering ({c})", "api_usage": "API usage ({c})",
    "operator_review": "Operator review ({c})", "waste_cost": "Waste ({c})", "waste_share": "Waste share",
    "naive_unit_cost": "Naive cost per produced output ({c})",
    "effective_unit_cost": "All-in cost per accepted output ({c})",
    # Anomalies and forecasts.
    "day": "Day", "dimension": "Dimension", "dimension_value": "Series", "direction": "Direction",
    "first_day": "First day", "last_day": "Last day", "series_days": "Days with cost", "status": "Status",
    "root_cause": "Root cause", "score": "Score", "horizon": "Horizon", "method": "Method",
    "forecast_month": "Month", "forecast": "Forecast ({c})", "budget_breach_date": "Budget breach date",
    # GPU-hours, prices and checks.
    "gpu_hours": "GPU-hours", "gpu_model": "GPU model", "provider": "Provider", "reason": "Reason",
    "pricing_status": "Pricing status", "source_kind": "Source", "amount": "Amount ({c})", "teams": "Teams",
    "price_per_gpu_hour": "Price per GPU-hour ({c})", "last_observed_at": "Last observed (UTC)",
    "check_name": "Check", "severity": "Severity", "detail": "Detail", "target": "Checked table",
}


def column_label(column: str, currency: str | None) -> str:
    """'Chargeback (USD)' for total_cost; unknown columns keep their name with spaces."""
    return COLUMN_LABELS.get(column, column.replace("_", " ")).format(c=currency or "currency")


def labelled(df: Any, currency: str | None = None) -> Any:
    """A copy of a frame with every column named by `column_label` (the one label dictionary)."""
    return df.rename(columns={c: column_label(c, currency) for c in df.columns})


def value_label(name: str) -> str:
    """A column or component name in words without its unit ('platform_labor' -> 'Platform labour'): for names
    that appear as values (cost components, chart legends)."""
    return column_label(name, None).replace(" (currency)", "")
