"""Streamlit helpers shared by the pages: the banner, filters, the not-published note, display casts.

Pages stay thin: they pick filters here, call `dashboards.data` and draw. Nothing here formats a
filter value into SQL; values go to data functions, which bind them as parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import pandas as pd
import streamlit as st

from reporting.formatting import exact, fmt_money
from reporting.safe_text import csv_frame, md_frame, md_text
from warehouse import serving, serving_decisions, serving_overview, serving_quality, serving_screens
from warehouse.home import Home, resolve_home
from warehouse.status import read_status

ALL = "All"
T = TypeVar("T")


def home() -> Path:
    """The warehouse home, resolved on every run so a changed GPU_LEDGER_HOME takes effect."""
    return resolve_home()


def serving_db() -> Path:
    """The published copy every page reads."""
    return Home(home()).serving_db


def fmt_time(value: Any) -> str:
    """Timestamps are stored in UTC without a zone; say so when showing them."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    if isinstance(value, str):
        return value
    return f"{pd.Timestamp(value):%Y-%m-%d %H:%M} UTC"


def banner() -> None:
    """Publication time and the last refresh outcome, drawn above every page."""
    # Metric values wrap instead of ending in '…' (four tiles of 'USD 4,151.44' do not fit at 1280 px).
    st.html("<style>[data-testid='stMetricValue'] > div {font-size: 1.6rem; white-space: normal; overflow-wrap: anywhere; "
            "overflow: visible; text-overflow: clip;}</style>")
    pub = load(serving.publication, serving_db())
    status = read_status(home())
    if pub is None:
        st.warning(f"No publication yet: {serving_db().name} has not been published in {home()}.")
    as_of = fmt_time(pub["published_at"]) if pub else "never"
    if status is not None and not status.get("ok", True):
        st.error(f"Last refresh failed because {md_text(status.get('message') or 'of an unknown error')}; "
                 f"showing the publication of {as_of} (data as of {as_of}).")
    elif pub is not None:
        refreshed = f" · last refresh ok at {status['finished_at']}" if status else ""
        warned = pub.get("checks_warned") or 0
        through = load(serving_screens.charges_through, serving_db())
        st.caption(f"**Charges through {through or 'unknown'}** (the last day a bill or API invoice covers) · "
                   f"published {as_of} · run {pub['run_id']} · checks: {pub.get('checks_passed')} passed, "
                   f"{warned} warnings (see Data quality) of {pub.get('checks_run')}{refreshed}")


@st.cache_data(ttl=3600, max_entries=512, show_spinner=False)
def _cached(module: str, name: str, stamp: tuple[int, int, int], args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> Any:
    # Only the reader modules are dispatched to: a cache key never names arbitrary code.
    readers = {"warehouse.serving": serving, "warehouse.serving_screens": serving_screens,
               "warehouse.serving_quality": serving_quality, "warehouse.serving_overview": serving_overview,
               "warehouse.serving_decisions": serving_decisions}
    return getattr(readers[module], name)(*args, **kwargs)


def load(fn: Callable[..., T], path: Path, *args: Any, **kwargs: Any) -> T:
    """Call a `warehouse.serving` / `warehouse.serving_screens` reader, cached per publication file.

    The key includes the file's inode, mtime and size: a refresh renames a new file into place, so the
    next run after a publication misses the cache and reads it. Errors (NotPublished) are not cached.
    """
    try:
        info = Path(path).stat()
    except FileNotFoundError:
        return fn(path, *args, **kwargs)
    return _cached(fn.__module__, fn.__name__, (info.st_ino, info.st_mtime_ns, info.st_size), (path, *args), kwargs)


def guard(fn: Callable[..., T], path: Path, *args: Any, **kwargs: Any) -> T | None:
    """Load data; if its table or column is not published yet, say so and return None."""
    try:
        return load(fn, path, *args, **kwargs)
    except serving.NotPublished as exc:
        st.info(f"Not published yet: {exc}. This section fills in once a refresh publishes it.")
        return None


def pick(label: str, options: list[Any], key: str, all_option: bool = True,
         fmt: Callable[[Any], str] = str) -> Any:
    """A sidebar select box for a page's own choice; the 'All' choice comes back as None (no filter)."""
    choices = ([ALL] if all_option else []) + list(options)
    if not choices:
        return None
    value = st.sidebar.selectbox(label, choices, key=key, format_func=lambda v: v if v == ALL else fmt(v))
    return None if value == ALL else value


def month(value: date | datetime) -> str:
    """'2025-01' for a billing period start."""
    return f"{pd.Timestamp(value):%Y-%m}"


def plot_text(value: Any) -> Any:
    """Plotly draws <a href>, <b>, <br> found in any text (legend, ticks, hover) as markup; entities are shown as
    the characters, so an untrusted name with '<' or '&' is drawn literally."""
    if isinstance(value, str) and any(c in value for c in "<>&"):
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return value


def _inert_names(fig: Any) -> None:
    """Team, workload and model names in a figure's traces drawn as text, never as Plotly markup."""
    for trace in fig.data:
        for attr in ("x", "y", "text", "hovertext", "labels"):
            values = getattr(trace, attr, None) if attr in trace else None
            if values is not None and not isinstance(values, str) and any(plot_text(v) is not v for v in values):
                trace[attr] = [plot_text(v) for v in values]
        name = getattr(trace, "name", None)
        if plot_text(name) is not name:
            trace.name = plot_text(name)
            if getattr(trace, "hovertemplate", None):  # plotly express writes the group's name into the template
                trace.hovertemplate = trace.hovertemplate.replace(name, trace.name)


def plot(fig: Any, *, y_title: str | None = None, x_title: str | None = None, share: bool = False,
         money: bool = False, height: int | None = None, margin_top: int = 110, legend_right: bool = False) -> None:
    """Draw a plotly figure the same way everywhere: months in order, plain numbers (never 1e-05), shares
    from 0 as %, the legend above the plot so it never squeezes the chart at 1280 px (or right of it, outside,
    with `legend_right`, for a long legend)."""
    months = any(getattr(t, "x", None) is not None and len(t.x) and isinstance(t.x[0], str)
                 and len(t.x[0]) == 7 and t.x[0][4] == "-" for t in fig.data)
    if months:
        # 'YYYY-MM' stays a category (plotly would read it as a date) and sorts as text, which is date order.
        fig.update_xaxes(type="category", categoryorder="category ascending")
    _inert_names(fig)
    fig.update_yaxes(exponentformat="none", separatethousands=True, automargin=True)
    fig.update_xaxes(automargin=True)
    if share:
        fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    elif money:
        fig.update_yaxes(rangemode="tozero")
    if y_title is not None:
        fig.update_yaxes(title_text=y_title)
    if x_title is not None:
        fig.update_xaxes(title_text=x_title)
    for trace in fig.data:
        if getattr(trace, "hovertemplate", None) and "%{y}" in trace.hovertemplate:
            # d3 ',.4~r': 4 significant digits in plain decimals, so 0.00002152 never shows as 2.152e-05.
            trace.hovertemplate = trace.hovertemplate.replace("%{y}", "%{y:.0%}" if share else "%{y:,.4~r}")
    # A long legend (many offers) goes right of the plot, outside it, so it never covers the title or the data.
    legend = ({"orientation": "v", "yanchor": "top", "y": 1, "xanchor": "left", "x": 1.02, "title_text": ""}
              if legend_right else {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "title_text": ""})
    fig.update_layout(legend=legend,
                      title={"y": 0.98, "yanchor": "top", "x": 0, "xanchor": "left"}, margin={"t": margin_top},
                      **({"height": height} if height else {}))
    st.plotly_chart(fig, width="stretch")


def _csv(df: pd.DataFrame) -> bytes:
    """CSV with exact amounts: Decimals as fixed-point text ('0.000000000000', never '0E-12'); names that a
    spreadsheet would run as formulas are quoted (before the amounts become text, so those stay numbers)."""
    out = csv_frame(df)
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(exact)
    # CRLF rows (RFC 4180): the csv writer then quotes a cell holding a CR, which with '\n' rows it leaves bare,
    # so a spreadsheet would start a new row inside a name and read what follows the CR as a formula.
    return out.to_csv(index=False, lineterminator="\r\n").encode()


def table(shown: pd.DataFrame, name: str, *, raw: pd.DataFrame | None = None, printed_max: int = 60,
          column_config: dict[str, Any] | None = None, height: int | None = None,
          links: dict[str, list[str]] | None = None) -> None:
    """A table with its CSV download (the one way every page shows a table).

    Up to `printed_max` rows print as text (selectable, wraps at 1280 px); more scroll in a grid. The CSV
    holds `raw` (exact amounts, column names as published) when given, else the rows as shown. `links`: per
    column, one URL per row (e.g. '?workload=<id>' to open that row on the page); the cell becomes a link."""
    if len(shown) <= printed_max and not column_config:
        # st.table renders every cell as Markdown: names are untrusted, so cells show their text literally.
        printed = md_frame(shown)
        for col, urls in (links or {}).items():
            target = md_text(col)
            printed[target] = [f"[{cell}]({quote(url, safe='?=&/%+')})" for cell, url in zip(printed[target], urls)]
        st.table(printed, hide_index=True)
    else:
        st.dataframe(shown, hide_index=True, column_config=column_config,
                     **({"height": height} if height else {}))
    data = raw if raw is not None else shown
    st.download_button(f"Download CSV ({len(data):,} rows)", _csv(data), file_name=f"{name}.csv", mime="text/csv",
                       key=f"csv_{name}", on_click="ignore", icon=":material/download:")


def unit_cost(amount: Decimal | float | None, currency: str | None) -> str:
    """A cost per output: cents from 1 up, else 4 significant digits in plain decimals ('USD 0.00007563',
    never 'USD 7.563e-05': an analyst copies these into spreadsheets and reads them aloud)."""
    if amount is None or (isinstance(amount, float) and math.isnan(amount)):
        return "n/a"
    value = float(amount)
    if value == 0 or abs(value) >= 1:
        return fmt_money(amount, currency)
    digits = 3 - math.floor(math.log10(abs(value)))
    return f"{currency or ''} {value:.{digits}f}".strip()


def to_float(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with Decimal columns as float, for charts and grids only (never for totals)."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object and out[col].map(lambda v: isinstance(v, Decimal)).any():
            out[col] = out[col].map(lambda v: float(v) if v is not None else None).astype("float64")
    return out


def money_table(df: pd.DataFrame, money_cols: list[str], currency_col: str = "currency",
                with_currency: bool = True) -> pd.DataFrame:
    """A copy with money columns as 'USD 1,234.57' strings (or '1,234.57' where the header names the currency),
    for printed tables (exact rounding, half-up, only at display)."""
    out = df.copy()
    for col in money_cols:
        if col in out.columns:
            out[col] = [fmt_money(v, c if with_currency else None) for v, c in zip(out[col], out[currency_col])]
    return out
