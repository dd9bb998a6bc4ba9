"""Data quality: warnings and failures first, each with the rows it found; stale prices by provider with a
drill-down; GPU-hours on no bill line (never $0); quarantined rows per source; bills held out, team tags
no team answers to and credentials redacted at load; every check result."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import pandas as pd
import streamlit as st

from dashboards import ui
from reporting.formatting import fmt_money
from reporting.safe_text import md_text
from warehouse import serving, serving_quality, serving_screens

path = ui.serving_db()
st.title("Data quality")


def _rows(found: pd.DataFrame) -> pd.DataFrame:
    """The JSON rows a check published, one column per field (what the analyst compares with the source)."""
    parsed = []
    for text in found["failing_row"]:
        try:
            value = json.loads(text, parse_float=Decimal)  # an amount shows every digit it was stored with
        except (TypeError, ValueError):
            value = {"row": text}
        parsed.append(value if isinstance(value, dict) else {"row": value})
    rows = pd.json_normalize(parsed).astype(str).replace({"None": "", "nan": ""})
    # Surrogate keys (md5 / sha256 hex) mean nothing to an analyst: the CSV keeps them, the page does not.
    keys = [c for c in rows.columns if len(rows) and rows[c].str.fullmatch(r"[0-9a-f]{32}|[0-9a-f]{64}").all()]
    return rows.drop(columns=keys)


STATUS = {"warn": "Warning", "fail": "Failed", "error": "Could not run"}
SHOWN_ROWS = 20  # the page shows a few rows of a check; its CSV holds every row the check found


def _title(row: Any) -> str:
    """The check's title ('Bill above list price: 6 GPU bill lines'); a publication from before titles carried
    dbt's own words ('Got 6 results, ...'), shown as the check's name in words and its count."""
    found = re.match(r"Got (\d+) results?, configured to", str(row.detail))
    if found:
        name = re.sub(r"^(assert|focus_dq)_", "", str(row.check_name)).replace("_", " ")
        return f"{name[:1].upper()}{name[1:]}: {int(found.group(1)):,} rows"
    return str(row.detail)


pub = ui.load(serving.publication, path)
checks = ui.guard(serving.check_results, path)
if pub is not None:
    c1, c2, c3 = st.columns(3)
    c1.metric("Checks passed", f"{pub.get('checks_passed')}/{pub.get('checks_run')}")
    c2.metric("Warnings", f"{pub.get('checks_warned', 0)}")
    failed = int(checks["status"].isin(["fail", "error"]).sum()) if checks is not None else 0
    c3.metric("Failed (non-blocking)", f"{failed}")
    tables = [t for t in str(pub.get("tables_published") or "").split(",") if t]
    st.caption(f"Run {pub['run_id']}, published {ui.fmt_time(pub['published_at'])}, {len(tables)} tables.")

st.subheader("Warnings and failures")
if checks is not None:
    not_passed = checks[checks["status"] != "pass"]
    if not_passed.empty:
        st.success(f"All {len(checks)} checks passed.")
    else:
        warned = int((not_passed["status"] == "warn").sum())
        st.warning(f"{warned} warnings and {len(not_passed) - warned} failed non-blocking checks of {len(checks)} "
                   "(a blocking failure would have withheld this publication). Open one for the rows it found.")
        for row in not_passed.itertuples(index=False):
            # An expander label is Markdown; a check's title can quote file, team or tag names.
            with st.expander(f"{md_text(STATUS.get(row.status, row.status))} · {md_text(_title(row))}"):
                st.caption(f"Check {md_text(row.check_name)} on {md_text(row.target)}.")
                found = ui.guard(serving.check_failures, path, row.check_name)
                if found is None or found.empty:
                    st.caption("No rows were published with this check.")
                else:
                    st.caption(f"{len(found):,} rows found; the first {min(len(found), SHOWN_ROWS)} are shown, the CSV "
                               "holds them all.")
                    ui.table(_rows(found.head(SHOWN_ROWS)), f"check_{row.check_name}", raw=found, printed_max=10)

st.subheader("Stale prices")
max_age = st.columns([1, 3])[0].number_input("Stale after (days)", min_value=1, max_value=3650, value=7, key="dq_age",
                          help="A current price last observed this many days before the publication or earlier.")
by_provider = ui.guard(serving_screens.stale_by_provider, path, int(max_age))
if by_provider is not None:
    if by_provider.empty:
        st.success(f"Every current price was observed within {max_age} days of the publication.")
    else:
        total = int(by_provider["stale_prices"].sum())
        st.warning(f"{total:,} current prices from {len(by_provider)} providers were last observed more than "
                   f"{max_age} days before the publication: the providers may have changed them since.")
        summary = pd.DataFrame({
            "Provider": by_provider["provider"], "Stale prices": by_provider["stale_prices"],
            "GPU models": by_provider["gpu_models"], "Oldest (days)": by_provider["oldest_age_days"],
            "Newest (days)": by_provider["newest_age_days"],
            "Oldest observed": by_provider["oldest_observed_at"].map(ui.fmt_time),
        })
        ui.table(summary, f"stale_prices_by_provider_{int(max_age)}d", raw=by_provider)
        provider = st.selectbox("Provider to drill into", by_provider["provider"].tolist(), index=None,
                                placeholder="Choose a provider to list its stale prices", key="dq_stale_provider")
        if provider is not None:
            stale = ui.guard(serving.stale_prices, path, int(max_age))
            if stale is not None:
                rows = stale[stale["provider"] == provider]
                shown = pd.DataFrame({
                    "SKU": rows["sku"], "Region": rows["region"].fillna("—"), "Pricing": rows["pricing_category"],
                    "GPU model": rows["gpu_model"],
                    "Per GPU-hour": [fmt_money(v, c) for v, c in zip(rows["price_per_gpu_hour"], rows["currency"])],
                    "Last observed": rows["last_observed_at"].map(ui.fmt_time),
                    "Age (days)": rows["age_days"],
                })
                ui.table(shown, f"stale_prices_{provider}_{int(max_age)}d", raw=rows, printed_max=15)

undated = ui.guard(serving_screens.undated_prices, path)
if undated is not None and not undated.empty:
    st.warning(f"{int(undated['undated_prices'].sum()):,} current prices from {len(undated)} providers are undated: "
               "nothing in their files or the files' names dates them and the pipeline did not fetch them, so no "
               "age is claimed. Fetch them (config/fetch) or put the date in the file name (prices_2025-04-10.json).")
    ui.table(pd.DataFrame({"Provider": undated["provider"], "Undated prices": undated["undated_prices"],
                           "GPU models": undated["gpu_models"], "Files": undated["sources"]}),
             "undated_prices", raw=undated)

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
        shown = by_reason.assign(gpu_hours=by_reason["gpu_hours"].map(lambda h: f"{float(h):,.1f}"), amount="unpriced")
        ui.table(shown.rename(columns={"reason": "Reason", "source_kind": "Source", "gpu_hours": "GPU-hours",
                                       "teams": "Teams", "amount": "Amount"}), "unpriced_gpu_hours", raw=by_reason)
    if not priced.empty:
        shown = priced.groupby(["pricing_status", "source_kind", "currency"], as_index=False).agg(
            gpu_hours=("gpu_hours", "sum"), amount=("amount", lambda s: sum(s.dropna(), 0)))
        raw = shown.copy()
        shown["gpu_hours"] = shown["gpu_hours"].map(lambda h: f"{float(h):,.1f}")
        shown = ui.money_table(shown, ["amount"])
        ui.table(shown.rename(columns={"pricing_status": "Pricing", "source_kind": "Source", "currency": "Currency",
                                       "gpu_hours": "GPU-hours", "amount": "Amount"}), "priced_gpu_hours", raw=raw)

st.subheader("Quarantined rows per source")
rejects = ui.guard(serving.rejects_by_source, path)
if rejects is not None:
    if rejects.empty:
        st.success("No rejected rows.")
    else:
        st.metric("Rejected rows", f"{int(rejects['rejected_rows'].sum()):,}")
        shown = rejects.assign(last_seen=rejects["last_seen"].map(ui.fmt_time)).rename(columns={
            "source_family": "Source", "format": "Format", "rule": "Rule", "rejected_rows": "Rejected rows",
            "files": "Files", "last_seen": "Last seen"})
        ui.table(shown, "rejects_by_source", raw=rejects)
        st.caption("Every rejected row with its file, line and problem: `gpu-ledger rejects`.")

st.subheader("Input gates: held-out bills, unknown team tags, credentials")
held = ui.guard(serving_quality.held_out_bills, path)
if held is not None:
    if held.empty:
        st.success("Every bill line has a currency: none is held out of the ledger.")
    else:
        st.error(f"{int(held['lines_held_out'].sum()):,} bill lines in {held['source_file'].nunique()} files name no "
                 "currency and are held out of every money figure. Add BillingCurrency to the export, or give the "
                 "billing account's currency in the registry (policies.default_currency_by_account).")
        shown = pd.DataFrame({
            "File": held["source_file"], "Billing account": held["billing_account_id"].fillna("(none)"),
            "Period": held["billing_period_start"].map(ui.fmt_time), "Lines": held["lines_held_out"],
            "Lines from-to": [f"{a}-{b}" for a, b in zip(held["first_line"], held["last_line"])],
            "Billed (unknown currency)": held["billed_cost_unknown_currency"].map(lambda v: f"{v:,.2f}"),
        })
        ui.table(shown, "bills_held_out", raw=held)
tags = ui.guard(serving_quality.unmatched_team_tags, path)
if tags is not None:
    if tags.empty:
        st.success("Every team tag value on the bill names a registered team (or there is no team registry).")
    else:
        st.warning(f"{tags['tag_value'].nunique()} team tag values name no registered team; their cost went to the "
                   "team shown (a later rule) or (unallocated). Fix the tag or add an alias to the team.")
        shown = pd.DataFrame({
            "Tag key": tags["tag_key"], "Tag value": tags["tag_value"], "Charged to": tags["charged_to"],
            "By": tags["charged_by"], "Lines": tags["lines"],
            "Cost (amortised)": [fmt_money(v, c) for v, c in zip(tags["effective_cost"], tags["currency"])],
        })
        ui.table(shown, "unmatched_team_tags", raw=tags, printed_max=15)
secrets = ui.guard(serving_quality.redactions_by_file, path)
if secrets is not None:
    if secrets.empty:
        st.success("No credential was found in any loaded file.")
    else:
        st.warning(f"{int(secrets['redactions'].sum()):,} values in {len(secrets)} files held a credential (a key, "
                   "token or password): each is stored only as its sha256. Rotate them; they were in the exports.")
        shown = pd.DataFrame({"Source": secrets["family"], "File": secrets["source_file"],
                              "Values redacted": secrets["redactions"], "Where (table.column count)":
                              secrets["redacted_columns"]})
        ui.table(shown, "credentials_redacted", raw=secrets)

if checks is not None:
    with st.expander(f"All {len(checks)} check results"):
        ui.table(checks.rename(columns={"check_name": "Check", "target": "Target", "severity": "Severity",
                                        "status": "Status", "detail": "Detail"}), "check_results", raw=checks,
                 printed_max=0)
