"""The money switch every page shares: amounts in the reporting currency (default) or in their native (billing)
currency, and the sentence saying which rates were used.

In the reporting currency a page fetches every currency and converts each row at its month's rate
(`fct_fx_month_rates`: the money table's effective invoice rate, else the rate of the month's first day), so
two currencies are only ever added after conversion; a row without a rate keeps its native currency and is
listed as not converted. In native currency a page shows one billing currency at a time, as billed.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboards import ui
from reporting.safe_text import md_text
from warehouse import serving_screens

KEY = "shared_money_view"
REPORTING, NATIVE = "reporting", "native"


def reporting_currency(path: Path) -> str:
    """The policy's reporting currency as published (USD when no rate is published)."""
    used = ui.guard(serving_screens.rates_used, path)
    return str(used["reporting_currency"]) if used else "USD"


def _remember() -> None:
    st.session_state[KEY] = st.session_state["money_view"]


def switch(path: Path) -> str:
    """Draw the sidebar switch (remembered across pages like the filters) and return REPORTING or NATIVE."""
    rc = reporting_currency(path)
    labels = {REPORTING: f"Reporting currency: {rc}", NATIVE: "Native: as billed"}
    st.session_state["money_view"] = st.session_state.get(KEY, REPORTING)
    return st.sidebar.radio("Amounts in", list(labels), key="money_view", format_func=labels.get,
                            on_change=_remember, horizontal=False)


def rates_caption(path: Path, mode: str) -> None:
    """Say which rates the figures use (or that they are as billed)."""
    used = ui.guard(serving_screens.rates_used, path)
    if mode == NATIVE:
        st.caption("Amounts as billed, one currency at a time (no conversion).")
    elif used is None:
        st.caption("No exchange rates published: amounts in another currency than USD are not converted.")
    else:
        st.caption(f"Amounts in {used['reporting_currency']}, converted with the {md_text(used['sources'])} "
                   f"(observations {used['first']} .. {used['last']}): each monthly figure at its month's rate "
                   f"(the invoice's effective rate, else the rate of the month's first day); a day without its own "
                   f"rate takes the "
                   f"last one at most {int(used['max_age'] or 0)} days earlier, never an older one.")


def convert(df: pd.DataFrame | None, path: Path, amounts: list[str], period: str = "period",
            currency: str = "currency") -> pd.DataFrame | None:
    """Every row's `amounts` in the reporting currency at its month's rate; `native_currency` and `fx_rate` keep
    what was billed and the rate. A row without a rate keeps its currency (never added to the converted ones)."""
    if df is None or df.empty or currency not in df:
        return df
    rates = ui.guard(serving_screens.month_rates, path)
    rc = reporting_currency(path)
    if rates is None or rates.empty:
        rates = pd.DataFrame({"period": df[period], "currency": rc, "rate_to_reporting": Decimal(1)}).drop_duplicates()
    key = pd.DataFrame({"period": pd.to_datetime(df[period]).dt.date, "currency": df[currency]})
    table = rates.assign(period=pd.to_datetime(rates["period"]).dt.date)
    rate = key.merge(table[["period", "currency", "rate_to_reporting"]], on=["period", "currency"], how="left")[
        "rate_to_reporting"].tolist()
    rate = [Decimal(1) if c == rc else r for c, r in zip(df[currency], rate)]
    out = df.copy()
    out["native_currency"] = df[currency]
    out["fx_rate"] = rate
    for col in amounts:
        if col in out:
            out[col] = [_times(v, r) for v, r in zip(out[col], rate)]
    out[currency] = [rc if r is not None and not pd.isna(r) else c for c, r in zip(df[currency], rate)]
    return out


def combine(df: pd.DataFrame | None, keys: list[str], amounts: list[str]) -> pd.DataFrame | None:
    """One row per `keys` and currency after `convert`: the amounts of a key's native currencies added (they
    are in one currency now), every other column from its first row, `native_currency` naming each native
    currency and its rate. For per-output figures this holds when every native row divides by the same count
    (fct_workload_unit_cost: each currency's cost over all the workload's outputs)."""
    if df is None or df.empty or "native_currency" not in df:
        return df
    group = [*keys, "currency"]
    rows = []
    for _, part in df.groupby(group, sort=False, dropna=False):
        first = part.iloc[0].copy()
        for col in amounts:
            if col in part:
                values = [v for v in part[col] if v is not None and not pd.isna(v)]
                first[col] = sum(values[1:], values[0]) if values else None
        first["native_currency"] = "; ".join(
            n if n == c else f"{n} at {float(r):.6f}"
            for n, r, c in sorted(zip(part["native_currency"], part["fx_rate"], part["currency"]), key=lambda t: t[0]))
        rows.append(first)
    return pd.DataFrame(rows).reset_index(drop=True)


def _times(value: object, rate: object) -> object:
    """value x rate, exact for DECIMAL money; unchanged without a rate or a value."""
    if rate is None or value is None or pd.isna(rate) or pd.isna(value):
        return value
    if isinstance(value, Decimal):
        return value * Decimal(str(rate))
    return float(value) * float(rate)


def not_converted(df: pd.DataFrame | None, rc: str, currency: str = "currency") -> None:
    """A warning naming the native currencies left out of a converted figure (no rate for their month)."""
    if df is None or df.empty or currency not in df:
        return
    left = sorted(set(df.loc[df[currency] != rc, currency].dropna()))
    if left:
        st.warning(f"Not converted (no rate within the lookback window for their month): {', '.join(left)}; "
                   f"switch to the native currency to see them.")
