"""Prices: price per GPU-hour over time by provider and pricing category, with when each was observed."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import ui
from reporting.formatting import fmt_money
from warehouse import serving

path = ui.serving_db()
st.title("GPU prices")
st.caption("Each price is valid from `valid_from` until `valid_to` (open = still current) and was last seen "
           "at `last_observed_at`; a price not re-observed recently may be stale.")

provider = ui.pick("Provider", ui.load(serving.distinct, path, "fct_gpu_price_history", "provider"), "pr_provider")
category = ui.pick("Pricing category", ui.load(serving.distinct, path, "fct_gpu_price_history", "pricing_category"),
                   "pr_category")
gpu = ui.pick("GPU model", ui.load(serving.distinct, path, "fct_gpu_price_history", "gpu_model"), "pr_gpu")
history = ui.guard(serving.prices, path, provider=provider, pricing_category=category, gpu_model=gpu)

if history is not None and history.empty:
    st.info("No prices for this selection.")
elif history is not None:
    current = history[history["valid_to"].isna()] if "valid_to" in history else history
    if not current.empty:
        cheapest = current.sort_values("price_per_gpu_hour").iloc[0]
        c1, c2, c3 = st.columns(3)
        c1.metric("Cheapest current GPU-hour",
                  f"{fmt_money(cheapest['price_per_gpu_hour'], cheapest.get('currency'))}")
        c2.metric("Offer", f"{cheapest['provider']} {cheapest.get('sku') or ''} ({cheapest['pricing_category']})")
        c3.metric("Observed at", ui.fmt_time(cheapest["last_observed_at"]))
    flat = ui.to_float(history)
    keys = [c for c in ("provider", "gpu_model", "pricing_category", "region") if c in flat]
    flat["series"] = flat[keys].astype(str).agg(" ".join, axis=1)
    # Each price holds from valid_from to valid_to; a current price (valid_to null) runs to the publication.
    pub = ui.load(serving.publication, path) or {}
    ends = flat.assign(valid_from=flat["valid_to"].fillna(pub.get("published_at") or flat["last_observed_at"])
                       if "valid_to" in flat else flat["last_observed_at"])
    # At a price change the old price's end must precede the new price's start, or the step zigzags.
    steps = pd.concat([flat.assign(_start=1), ends.assign(_start=0)]).sort_values(["series", "valid_from", "_start"])
    fig = px.line(steps, x="valid_from", y="price_per_gpu_hour", color="series", line_shape="hv",
                  hover_data=[c for c in ("sku", "region", "gpu_count", "last_observed_at", "source") if c in flat],
                  title="Price per GPU-hour over time", labels={"valid_from": "valid"})
    st.plotly_chart(fig)
    st.dataframe(flat, hide_index=True, column_config={
        "price_per_hour": st.column_config.NumberColumn(format="%.4f"),
        "price_per_gpu_hour": st.column_config.NumberColumn(format="%.4f"),
    })
