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
}


def column_label(column: str, currency: str | None) -> str:
    """'Chargeback (USD)' for total_cost; unknown columns keep their name with spaces."""
    return COLUMN_LABELS.get(column, column.replace("_", " ")).format(c=currency or "currency")
