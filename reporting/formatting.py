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
    """A cost per output: cents when it is at least 1, else 4 significant digits ('USD 0.005508')."""
    if amount is None or (isinstance(amount, float) and math.isnan(amount)):
        return "n/a"
    if abs(Decimal(str(amount))) >= 1:
        return fmt_money(amount, currency)
    return f"{currency or ''} {float(amount):.4g}".strip()
