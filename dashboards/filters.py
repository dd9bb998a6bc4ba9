"""The filters every page shares (team, workload, month, currency), kept in st.session_state across pages.

Each filter offers only what exists for the filters above it (team -> workload -> month -> currency) in the
data the page shows (`warehouse.serving_screens.filter_keys`), so no choice leads to an empty page. A
choice is remembered under its own session key, not the widget's: Streamlit drops a widget's state when a
page without it runs, and a page may not offer the remembered value (then it shows its first choice and the
remembered one comes back on the pages that have it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboards import currency as money_view
from dashboards import ui
from warehouse import serving_screens

ORDER = ("team", "workload", "month", "currency")
LABELS = {"team": "Team", "workload": "Workload", "month": "Month", "currency": "Currency"}


@dataclass(frozen=True)
class Selection:
    """The page's filters; None means every value (currency is never None when the page has data).

    `currency` is the currency the page's figures are shown in: the reporting currency when `converted` (the
    page fetches every currency, `fetch_currency` None, and converts with dashboards.currency.convert), else
    the native currency chosen (`fetch_currency` the same)."""

    team: str | None = None
    workload: str | None = None
    month: date | None = None
    currency: str | None = None
    converted: bool = False
    fetch_currency: str | None = None


def store(name: str) -> str:
    """The session key a shared filter's choice is remembered under."""
    return f"shared_filter_{name}"


def _remember(name: str) -> None:
    """on_change: the user's choice becomes the shared one (kept while other pages run)."""
    st.session_state[store(name)] = st.session_state[f"filter_{name}"]


def _choices(rows: pd.DataFrame, name: str) -> list[Any]:
    values = rows.dropna(subset=[name])
    if name == "currency":
        # Most rows first: the page opens on the currency that carries the business.
        return values.groupby(name)["n"].sum().sort_values(ascending=False, kind="stable").index.tolist()
    return sorted(values[name].unique().tolist())


def _select(name: str, options: list[Any], all_option: bool) -> Any:
    choices = ([ui.ALL] if all_option else []) + options
    saved = st.session_state.get(store(name), ui.ALL)
    widget = f"filter_{name}"
    # Set before the widget is drawn (never with index=): the widget then shows the shared choice.
    st.session_state[widget] = saved if saved in choices else choices[0]
    fmt = ui.month if name == "month" else str
    value = st.sidebar.selectbox(LABELS[name], choices, key=widget, on_change=_remember, args=(name,),
                                 format_func=lambda v: v if v == ui.ALL else fmt(v))
    return None if value == ui.ALL else value


def shared(path: Path, source: str, use: tuple[str, ...] = ORDER, required: tuple[str, ...] = (),
           native_only: str | None = None) -> Selection:
    """Draw the page's shared filters (those in `use`) in the sidebar and return the selection.

    `required` filters have no 'All' (GPU decision needs one workload); currency never has one, because
    amounts in different currencies are never added or drawn on one axis unconverted. The money switch
    (dashboards.currency) is drawn first on every page; in the reporting currency the currency filter is not
    drawn (one currency: every amount converted). A page that shows amounts only as billed passes
    `native_only` (the reason, said under the switch) and keeps its currency filter in both positions."""
    mode = money_view.switch(path)
    converted = mode == money_view.REPORTING and "currency" in use and native_only is None
    if native_only and mode == money_view.REPORTING:
        st.sidebar.caption(native_only)
    keys = ui.guard(serving_screens.filter_keys, path, source)
    if keys is None or keys.empty:
        return Selection(converted=converted)
    chosen: dict[str, Any] = {}
    rows = keys
    for name in ORDER:
        if name not in use or (name == "currency" and converted):
            continue
        options = _choices(rows, name)
        if not options:
            continue
        value = _select(name, options, all_option=name != "currency" and name not in required)
        if value is not None:
            rows = rows[rows[name] == value]
        chosen[name] = value
    st.sidebar.caption("Filters are shared by every page; each lists only what exists for the ones above it.")
    if converted:
        return Selection(**chosen, currency=money_view.reporting_currency(path), converted=True, fetch_currency=None)
    return Selection(**chosen, fetch_currency=chosen.get("currency"))
