"""Prices: the current price per GPU-hour of every GPU model by pricing category, with its age, in one currency;
a GPU model's price history once one is chosen."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards import filters, ui
from reporting.formatting import fmt_money
from reporting.safe_text import md_text
from warehouse import serving, serving_screens

STALE_AFTER_DAYS = 7  # the Data quality page's default: a price not re-observed for a week may have changed


def _observed(offer: pd.Series) -> str:
    """When an offer was last seen, in words: an undated price never shows its load time as a date."""
    if offer["last_observed_at_basis"] == "undated":
        return "undated (nothing in its file or the file's name dates it)"
    return (f"last observed {ui.fmt_time(offer['last_observed_at'])}, "
            f"{int(offer['age_days']):,} days before the publication")

path = ui.serving_db()
st.title("GPU prices")
st.caption(f"Current = the price still valid (no newer observation replaced it). Age = days between its last "
           f"observation and the publication; older than {STALE_AFTER_DAYS} days is flagged stale: the provider "
           "may have changed it since. Undated = nothing dates the price (no time in its file or the file's name, "
           "and it was not fetched by the pipeline): it has no age. One currency at a time: prices are never "
           "converted.")

sel = filters.shared(path, "prices", use=("currency",),
                     native_only="Prices are shown as quoted, one currency at a time; the GPU decision compares "
                                 "every offer converted at the rate of its observation day.")
cur = sel.currency or ""
current = ui.guard(serving_screens.current_prices, path, sel.currency)

if current is not None and current.empty:
    st.info("No current prices in this currency.")
elif current is not None:
    current["stale"] = current["age_days"] > STALE_AFTER_DAYS
    current["undated"] = current["last_observed_at_basis"] == "undated"
    cheapest = current.sort_values("price_per_gpu_hour").iloc[0]
    c1, c2, c3 = st.columns(3)
    c1.metric(f"GPU models with a current price ({cur})", f"{current['gpu_model'].nunique():,}")
    c2.metric("Stale (cheapest offer older than "
              f"{STALE_AFTER_DAYS} days)", f"{int(current['stale'].sum()):,} of {len(current):,}",
              help=f"{int(current['undated'].sum()):,} more are undated: nothing dates them, so no age is claimed.")
    c3.metric("Cheapest GPU-hour", fmt_money(cheapest["price_per_gpu_hour"], cur),
              help=f"{md_text(cheapest['gpu_model'])} {md_text(cheapest['pricing_category'])} at "
                   f"{md_text(cheapest['provider'])} {md_text(cheapest['sku'])}, {_observed(cheapest)}")
    # Model, provider and SKU names come from price pages and exports: shown literally, never as Markdown.
    st.caption(f"Cheapest GPU-hour: {md_text(cheapest['gpu_model'])} ({md_text(cheapest['pricing_category'])}) at "
               f"{md_text(cheapest['provider'])} {md_text(cheapest['sku'])}, {_observed(cheapest)}"
               + (" (stale)." if cheapest["stale"] else "."))

    flat = ui.to_float(current)
    flat["freshness"] = ["undated" if u else f"stale (> {STALE_AFTER_DAYS} days)" if s else "fresh"
                         for s, u in zip(flat["stale"], flat["undated"])]
    order = flat.groupby("gpu_model")["price_per_gpu_hour"].min().sort_values().index.tolist()
    fig = px.bar(flat, x="gpu_model", y="price_per_gpu_hour", color="pricing_category", barmode="group",
                 pattern_shape="freshness", pattern_shape_map={"fresh": "", f"stale (> {STALE_AFTER_DAYS} days)": "/", "undated": "."},
                 category_orders={"gpu_model": order},
                 hover_data={"provider": True, "sku": True, "region": True, "age_days": True, "offers": True},
                 title=f"Cheapest current price per GPU-hour, by GPU model and pricing category ({cur})",
                 labels={"gpu_model": "GPU model", "price_per_gpu_hour": f"{cur} per GPU-hour",
                         "pricing_category": "Pricing", "age_days": "age (days)", "freshness": "Observed"})
    fig.update_xaxes(tickangle=-45)
    ui.plot(fig, money=True, height=560)

    table = pd.DataFrame({
        "GPU model": current["gpu_model"], "Pricing": current["pricing_category"],
        f"Cheapest per GPU-hour ({cur})": [fmt_money(v, None) for v in current["price_per_gpu_hour"]],
        "Offers": current["offers"], "Cheapest at": current["provider"] + " " + current["sku"].fillna(""),
        "Age (days)": [("undated" if u else f"{int(a):,}") for a, u in zip(current["age_days"], current["undated"])],
        "Stale": ["STALE" if s else "" for s in current["stale"]],
    })  # highest price, region and observation time are in the CSV: seven columns fit 1440 px
    st.subheader(f"Current price per GPU model and pricing category ({cur})")
    ui.table(table, f"current_prices_{cur}", raw=current, printed_max=20)

    st.subheader("Price history")
    gpu = st.selectbox("GPU model", order, index=None, placeholder="Choose a GPU model to see its price history",
                       key="pr_history_gpu")
    if gpu is None:
        st.caption("The history of one GPU model at a time: every provider, SKU and region that priced it.")
    else:
        history = ui.guard(serving_screens.price_history, path, gpu, sel.currency)
        if history is not None and not history.empty:
            pub = ui.load(serving.publication, path) or {}
            undated = history["last_observed_at_basis"] == "undated"
            hist = ui.to_float(history[~undated])
            if undated.any():
                st.caption(f"{int(undated.sum()):,} undated offers are not drawn on the time axis (nothing dates "
                           "them); the table below lists them.")
            hist["offer"] = (hist["provider"] + " " + hist["sku"].fillna("") + " " + hist["region"].fillna("")
                             + " (" + hist["pricing_category"] + ")")
            # Each price holds from valid_from to valid_to; a current one runs to the publication. At a change
            # the old price's end must precede the new one's start, or the step zigzags.
            ends = hist.assign(valid_from=hist["valid_to"].fillna(pub.get("published_at") or hist["last_observed_at"]))
            steps = pd.concat([hist.assign(_start=1), ends.assign(_start=0)]).sort_values(
                ["offer", "valid_from", "_start"])
            # Markers too: an offer seen once is one point (a line needs two), and the cheapest offers often are.
            if not hist.empty:
                ui.plot(px.line(steps, x="valid_from", y="price_per_gpu_hour", color="offer", line_shape="hv",
                                markers=True, title=f"{ui.plot_text(gpu)}: price per GPU-hour over time ({cur})",
                                labels={"valid_from": "Valid from", "price_per_gpu_hour": f"{cur} per GPU-hour",
                                        "offer": "Offer"}), money=True, legend_right=True, height=520)
            hist_table = pd.DataFrame({
                "Provider": history["provider"], "SKU": history["sku"], "Region": history["region"].fillna("—"),
                "Pricing": history["pricing_category"], "GPUs": history["gpu_count"],
                f"Per GPU-hour ({cur})": [fmt_money(v, None) for v in history["price_per_gpu_hour"]],
                f"Per instance-hour ({cur})": [fmt_money(v, None) for v in history["price_per_hour"]],
                "Valid from": ["undated" if u else ui.fmt_time(t) for t, u in zip(history["valid_from"], undated)],
                "Valid to": [ui.fmt_time(v) if pd.notna(v) else "current" for v in history["valid_to"]],
                "Last observed": ["undated" if u else ui.fmt_time(t)
                                  for t, u in zip(history["last_observed_at"], undated)],
            })
            ui.table(hist_table, f"price_history_{gpu}_{cur}", raw=history, printed_max=20)
