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

import pandas as pd
import streamlit as st

from reporting.formatting import fmt_money
from warehouse import serving
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
    pub = load(serving.publication, serving_db())
    status = read_status(home())
    if pub is None:
        st.warning(f"No publication yet: {serving_db().name} has not been published in {home()}.")
    as_of = fmt_time(pub["published_at"]) if pub else "never"
    if status is not None and not status.get("ok", True):
        st.error(f"Last refresh failed because {status.get('message') or 'of an unknown error'}; "
                 f"showing the publication of {as_of} (data as of {as_of}).")
    elif pub is not None:
        refreshed = f" · last refresh ok at {status['finished_at']}" if status else ""
        warned = pub.get("checks_warned") or 0
        st.caption(f"Data as of {as_of} · run {pub['run_id']} · checks: {pub.get('checks_passed')} passed, "
                   f"{warned} warnings (see Data quality) of {pub.get('checks_run')}{refreshed}")


@st.cache_data(ttl=3600, max_entries=512, show_spinner=False)
def _cached(name: str, stamp: tuple[int, int, int], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return getattr(serving, name)(*args, **kwargs)


def load(fn: Callable[..., T], path: Path, *args: Any, **kwargs: Any) -> T:
    """Call a `dashboards.data` function, cached per publication file.

    The key includes the file's inode, mtime and size: a refresh renames a new file into place, so the
    next run after a publication misses the cache and reads it. Errors (NotPublished) are not cached.
    """
    try:
        info = Path(path).stat()
    except FileNotFoundError:
        return fn(path, *args, **kwargs)
    return _cached(fn.__name__, (info.st_ino, info.st_mtime_ns, info.st_size), (path, *args), kwargs)


def guard(fn: Callable[..., T], path: Path, *args: Any, **kwargs: Any) -> T | None:
    """Load data; if its table or column is not published yet, say so and return None."""
    try:
        return load(fn, path, *args, **kwargs)
    except serving.NotPublished as exc:
        st.info(f"Not published yet: {exc}. This section fills in once a refresh publishes it.")
        return None


def pick(label: str, options: list[Any], key: str, all_option: bool = True,
         fmt: Callable[[Any], str] = str) -> Any:
    """A sidebar select box; the 'All' choice comes back as None (no filter)."""
    choices = ([ALL] if all_option else []) + list(options)
    if not choices:
        return None
    value = st.sidebar.selectbox(label, choices, key=key, format_func=lambda v: v if v == ALL else fmt(v))
    return None if value == ALL else value


def month(value: date | datetime) -> str:
    """'2025-01' for a billing period start."""
    return f"{pd.Timestamp(value):%Y-%m}"


def plot(fig: Any) -> None:
    """Draw a plotly figure; 'YYYY-MM' month labels stay categories (plotly would read them as dates)."""
    if any(getattr(t, "x", None) is not None and len(t.x) and isinstance(t.x[0], str) for t in fig.data):
        fig.update_xaxes(type="category")
    st.plotly_chart(fig)


def to_float(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with Decimal columns as float, for charts and grids only (never for totals)."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object and out[col].map(lambda v: isinstance(v, Decimal)).any():
            out[col] = out[col].map(lambda v: float(v) if v is not None else None).astype("float64")
    return out


def money_table(df: pd.DataFrame, money_cols: list[str], currency_col: str = "currency") -> pd.DataFrame:
    """A copy with money columns as 'USD 1,234.57' strings, for st.table (printed text, exact rounding)."""
    out = df.copy()
    for col in money_cols:
        if col in out.columns:
            out[col] = [fmt_money(v, c) for v, c in zip(out[col], out[currency_col])]
    return out
