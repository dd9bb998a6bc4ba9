"""Data quality: the published run's checks, quarantined rows per source, stale prices, and GPU-hours on no
bill line (list-priced, owned-hardware, or unpriced with a reason: never $0)."""

from __future__ import annotations

import streamlit as st

from dashboards import ui
from warehouse import serving

path = ui.serving_db()
st.title("Data quality")

pub = ui.load(serving.publication, path)
if pub is not None:
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Checks passed", f"{pub.get('checks_passed')}/{pub.get('checks_run')}")
    c2.metric("Warnings", f"{pub.get('checks_warned', 0)}")
    c3.metric("Run", str(pub["run_id"]))
    c4.metric("Published", ui.fmt_time(pub["published_at"]))
    st.caption(f"Tables published: {pub.get('tables_published') or 'n/a'}")

st.subheader("Check results")
checks = ui.guard(serving.check_results, path)
if checks is not None:
    not_passed = checks[checks["status"] != "pass"]
    if not_passed.empty:
        st.success(f"All {len(checks)} checks passed.")
    else:
        warned = int((not_passed["status"] == "warn").sum())
        st.warning(f"{warned} warnings and {len(not_passed) - warned} failed non-blocking checks of {len(checks)} "
                   "(a blocking failure would have withheld this publication). Each is listed below with what it found.")
        for row in not_passed.itertuples(index=False):
            with st.expander(f"{row.status.upper()} · {row.check_name} ({row.target})"):
                st.write(row.detail)
                found = ui.guard(serving.check_failures, path, row.check_name)
                if found is not None and not found.empty:
                    st.dataframe(found, hide_index=True)
    with st.expander(f"All {len(checks)} check results"):
        st.dataframe(checks, hide_index=True)

st.subheader("Quarantined rows per source")
rejects = ui.guard(serving.rejects_by_source, path)
if rejects is not None:
    if rejects.empty:
        st.success("No rejected rows.")
    else:
        st.metric("Rejected rows", f"{int(rejects['rejected_rows'].sum()):,}")
        st.table(rejects, hide_index=True)

st.subheader("Stale prices")
max_age = st.sidebar.number_input("Stale after (days)", min_value=1, max_value=365, value=7, key="dq_age")
stale = ui.guard(serving.stale_prices, path, int(max_age))
if stale is not None:
    if stale.empty:
        st.success(f"Every current price was observed within {max_age} days of the publication.")
    else:
        st.warning(f"{len(stale)} current prices were last observed more than {max_age} days before the publication.")
        st.table(ui.to_float(stale), hide_index=True)

st.subheader("GPU-hours on no bill line: priced or not")
st.caption("Production GPU-hours from run records, schedulers and telemetry that no bill line covers. List-priced: the "
           "observed price valid when they ran; owned-hardware: the owned_hardware policy rate; unpriced: no price "
           "could be found, so no amount is shown (never $0) and the reason is listed.")
usage = ui.guard(serving.usage_pricing, path)
if usage is not None:
    unpriced = usage[usage["pricing_status"] == "unpriced"]
    priced = usage[usage["pricing_status"] != "unpriced"]
    c1, c2 = st.columns(2)
    c1.metric("Unpriced GPU-hours", f"{float(sum(unpriced['gpu_hours'], 0.0)):,.1f}")
    c2.metric("Priced GPU-hours (list-priced + owned-hardware)", f"{float(sum(priced['gpu_hours'], 0.0)):,.1f}")
    if unpriced.empty:
        st.success("Every GPU-hour on no bill line has a price.")
    else:
        st.warning(f"{float(sum(unpriced['gpu_hours'], 0.0)):,.1f} GPU-hours have no price: they are in no "
                   "chargeback or showback figure. By reason:")
        by_reason = unpriced.groupby(["reason", "source_kind"], as_index=False, dropna=False).agg(
            gpu_hours=("gpu_hours", "sum"), teams=("teams", "sum"))
        by_reason["gpu_hours"] = by_reason["gpu_hours"].map(lambda h: f"{float(h):,.1f}")
        by_reason["amount"] = "unpriced"
        st.table(by_reason.rename(columns={"reason": "Reason", "source_kind": "Source", "gpu_hours": "GPU-hours",
                                           "teams": "Teams", "amount": "Amount"}), hide_index=True)
    if not priced.empty:
        shown = priced.groupby(["pricing_status", "source_kind", "currency"], as_index=False).agg(
            gpu_hours=("gpu_hours", "sum"), amount=("amount", lambda s: sum(s.dropna(), 0)))
        shown["gpu_hours"] = shown["gpu_hours"].map(lambda h: f"{float(h):,.1f}")
        shown = ui.money_table(shown, ["amount"])
        st.table(shown.rename(columns={"pricing_status": "Pricing", "source_kind": "Source", "currency": "Currency",
                                       "gpu_hours": "GPU-hours", "amount": "Amount"}), hide_index=True)
