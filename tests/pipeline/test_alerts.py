"""Spend alerts: each anomaly and budget breach is POSTed once across refreshes.

The end-to-end case refreshes tests/fixtures/anomalies/spike_2025-04 twice into one home with
GPU_LEDGER_WEBHOOK_URL pointing at a local HTTP server (127.0.0.1). tests/dbt/test_anomalies.py
derives the fixture's figures by hand; the alerts it must raise follow from them:

  anomalies on 2025-04-21 (the last day of every series, so inside the 7-day alert lookback):
    team alpha, workload alpha-batch, provider AWS, service Amazon Elastic Compute Cloud (USD,
    600 vs 100: the same alpha spike in each of its four USD series; its lines have no GPU model)
    + unit_cost beta-chat (EUR, 0.50 vs 0.20)                                  -> 5 anomaly alerts
  budget breaches of the basis month (horizon 0):
    alpha chargeback 3714.29 > 3000 and alpha all-in showback 4014.29 > 3000; beta 6000 <= 10000,
    gamma 214.29 <= 1000                                                        -> 2 budget alerts
  first refresh: 7 POSTs; second refresh on the same inputs: 0 more.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import duckdb
import pytest
from rich.console import Console

from pipelines.cli_alerts import print_open_alerts
from tests import prefetch
from warehouse.alerts import WEBHOOK_ENV, load_ledger, open_alerts, raise_alerts

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "anomalies" / "spike_2025-04"

ANOMALY_KEYS = {
    "anomaly|team|alpha|USD|2025-04-21",
    "anomaly|workload|alpha-batch|USD|2025-04-21",
    "anomaly|provider|AWS|USD|2025-04-21",
    "anomaly|service|Amazon Elastic Compute Cloud|USD|2025-04-21",
    "anomaly|unit_cost|beta-chat|EUR|2025-04-21",
}
BUDGET_KEYS = {"budget|chargeback|alpha|USD|2025-04-01", "budget|showback|alpha|USD|2025-04-01"}


def _posted(httpserver) -> list[dict]:
    return [json.loads(request.data) for request, _response in httpserver.log]


def build_alert_runs(root: Path) -> dict:
    """Both refreshes of the spike fixture into one home, GPU_LEDGER_WEBHOOK_URL pointing at a local
    HTTP server (a tests/prefetch.py job): the POSTs received after the first and after the second.

    The first refresh's publication is kept as `first_serving`: tests/dbt/test_anomalies.py checks the
    fixture's marts on it (the same inputs into a fresh home; the webhook only decides where alerts go),
    rather than refreshing the same fixture a third time."""
    from pytest_httpserver import HTTPServer

    from pipelines.cli import execute_refresh

    server = HTTPServer(host="127.0.0.1")
    server.expect_request("/hooks/t0ken", method="POST").respond_with_data("ok")
    server.start()
    mp = pytest.MonkeyPatch()
    mp.setenv(WEBHOOK_ENV, server.url_for("/hooks/t0ken"))
    inputs, home = root / "inputs", root / "home"
    shutil.copytree(FIXTURE, inputs)
    try:
        runs = [execute_refresh(home, inputs, docs=False)]
        first = _posted(server)
        first_serving = root / "first_serving.duckdb"
        if runs[0][0]:
            shutil.copyfile(home / "serving.duckdb", first_serving)
        # The same data rebuilt and published again (a plain refresh would stop at "no new data").
        runs.append(execute_refresh(home, inputs, full_refresh=True, docs=False))
        both = _posted(server)
    finally:
        mp.undo()
        server.stop()
    return {"home": home, "host": server.host, "runs": [(ok, reason) for ok, _run, reason in runs],
            "first": first, "both": both, "first_serving": first_serving}


@pytest.fixture(scope="module")
def alert_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """build_alert_runs(root), built ahead in tests/prefetch.py."""
    return prefetch.result("alert_runs", tmp_path_factory)


def test_two_refreshes_post_each_alert_exactly_once(alert_runs: dict) -> None:
    assert alert_runs["host"] == "127.0.0.1"
    home = alert_runs["home"]
    (ok, reason), (ok2, reason2) = alert_runs["runs"]
    assert ok, reason
    first = alert_runs["first"]
    keys = [p["key"] for p in first]
    assert len(keys) == len(set(keys)) == 7, keys  # 5 anomalies + 2 budget breaches
    assert set(keys) == ANOMALY_KEYS | BUDGET_KEYS
    spike = next(p for p in first if p["key"] == "anomaly|team|alpha|USD|2025-04-21")
    assert spike["kind"] == "anomaly" and spike["source"] == "gpu-ledger"
    assert (spike["actual"], spike["expected"], spike["expected_low"], spike["expected_high"]) == \
        ("600.00", "100.00", "80.00", "120.00")
    assert spike["root_cause"] == "sku r7i.48xlarge +500.00 (100%)"
    breach = next(p for p in first if p["key"] == "budget|showback|alpha|USD|2025-04-01")
    assert breach["budget_breach_date"] == "2025-04-23" and breach["forecast"] == "4014.29"

    assert ok2, reason2  # the second refresh, no new data: nothing posted again
    assert len(alert_runs["both"]) == 7, [p["key"] for p in alert_runs["both"][7:]]

    ledger = load_ledger(home)
    assert set(ledger) == ANOMALY_KEYS | BUDGET_KEYS
    assert all(a["delivered_at"] and a["open"] for a in ledger.values())
    console = Console(record=True, width=200)
    assert print_open_alerts(console, home) == 7
    text = console.export_text()
    assert "7 open" in text and "0 not posted" in text and "... and 2 more" in text

    # The team report carries the section: alpha's April anomaly with its band, root cause and chart, and
    # both forecasts with their breach dates (2025-04-25 chargeback, 2025-04-23 showback).
    report = (home / "reports" / "2025-04" / "alpha.html").read_text()
    section = report[report.index("<h2>Anomalies and forecast</h2>"):]
    assert "sku r7i.48xlarge +500.00 (100%)" in section and "USD 80.00 .. USD 120.00" in section
    assert section.count("<svg") == 2  # the team alpha and workload alpha-batch series (provider/service are no team's)
    assert "2025-04-25" in section and "2025-04-23" in section
    gamma = (home / "reports" / "2025-04" / "gamma.html").read_text()
    assert "not enough history (3 days)" in gamma


# --- raise_alerts on a hand-made publication (no refresh): lookback, retries, no webhook ----------

def _publication(path: Path, anomaly_days: list[str], last_day: str, breach: bool) -> None:
    """A serving.duckdb with just the three tables alerts read."""
    path.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    con.execute("""create table fct_cost_anomalies (anomaly_id varchar, day date, dimension varchar,
        dimension_value varchar, currency varchar, actual decimal(38, 12), expected decimal(38, 12),
        expected_low decimal(38, 12), expected_high decimal(38, 12), impact_abs decimal(38, 12),
        impact_pct double, score double, direction varchar, root_cause varchar)""")
    for day in anomaly_days:
        con.execute("insert into fct_cost_anomalies values (?, ?, 'team', 't1', 'USD', 50, 10, 8, 12, 40, 4.0, "
                    "20.0, 'spike', 'sku x +40.00 (100%)')", [f"team|t1|USD|{day}", day])
    con.execute("""create table fct_anomaly_coverage as select 'team' as dimension, 't1' as dimension_value,
                   'USD' as currency, cast(? as date) as last_day""", [last_day])
    con.execute("""create table fct_spend_forecast (basis varchar, team_id varchar, currency varchar,
        forecast_month date, horizon integer, method varchar, forecast decimal(38, 12),
        forecast_low decimal(38, 12), forecast_high decimal(38, 12), budget_monthly decimal(38, 12),
        forecast_exceeds_budget boolean, budget_breach_date date)""")
    con.execute("insert into fct_spend_forecast values ('chargeback', 't1', 'USD', date '2025-04-01', 0, 'run-rate', "
                "?, 1000, 1400, 1000, ?, ?)", [1200 if breach else 900, breach, "2025-04-26" if breach else None])
    con.close()


def test_lookback_retry_and_no_webhook(httpserver, tmp_path, caplog) -> None:
    home, serving = tmp_path, tmp_path / "serving.duckdb"
    # 2025-04-01 is 29 days before the series' last day 2025-04-30: history, not news (lookback 7 days:
    # days after 04-23 alert); 2025-04-24 and 04-30 alert.
    _publication(serving, ["2025-04-01", "2025-04-24", "2025-04-30"], "2025-04-30", breach=True)

    # No webhook: recorded (open), nothing posted.
    out = raise_alerts(home, serving, None)
    assert (out.current, out.new, out.posted, out.failed) == (3, 3, 0, 0)
    assert {a["key"] for a in open_alerts(home)} == {
        "anomaly|team|t1|USD|2025-04-24", "anomaly|team|t1|USD|2025-04-30", "budget|chargeback|t1|USD|2025-04-01"}

    # A failing webhook: logged by host only, not raised, nothing marked delivered.
    httpserver.expect_oneshot_request("/hook/s3cret", method="POST").respond_with_data("down", status=503)
    with caplog.at_level(logging.WARNING):
        out = raise_alerts(home, serving, httpserver.url_for("/hook/s3cret"))
    assert (out.new, out.posted, out.failed) == (0, 0, 1)
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "warehouse.alerts")
    assert "HTTP 503" in logged and "s3cret" not in logged
    assert not any(a["delivered_at"] for a in load_ledger(home).values())

    # The webhook back: the three undelivered alerts go, once; a further call posts nothing.
    httpserver.expect_request("/hook/s3cret", method="POST").respond_with_data("ok")
    out = raise_alerts(home, serving, httpserver.url_for("/hook/s3cret"))
    assert (out.posted, out.failed) == (3, 0)
    assert raise_alerts(home, serving, httpserver.url_for("/hook/s3cret")).posted == 0
    assert len(httpserver.log) == 1 + 3

    # The breach is gone from the next publication: its alert closes, the anomalies stay open.
    _publication(serving, ["2025-04-24", "2025-04-30"], "2025-04-30", breach=False)
    raise_alerts(home, serving, httpserver.url_for("/hook/s3cret"))
    assert {a["key"] for a in open_alerts(home)} == {"anomaly|team|t1|USD|2025-04-24", "anomaly|team|t1|USD|2025-04-30"}
    assert load_ledger(home)["budget|chargeback|t1|USD|2025-04-01"]["open"] is False
    assert len(httpserver.log) == 4


def test_unreachable_webhook_is_not_fatal(tmp_path, caplog) -> None:
    serving = tmp_path / "serving.duckdb"
    _publication(serving, ["2025-04-30"], "2025-04-30", breach=False)
    # Port 9 (discard) on 127.0.0.1 has no listener here: connection refused, well inside the 5 s timeout.
    with caplog.at_level(logging.WARNING):
        out = raise_alerts(tmp_path, serving, "http://127.0.0.1:9/hooks/tok")
    assert (out.current, out.posted, out.failed) == (1, 0, 1)
    assert "ConnectionError" in caplog.text and "/hooks/tok" not in caplog.text


def test_status_says_none_open(tmp_path) -> None:
    console = Console(record=True, width=120)
    assert print_open_alerts(console, tmp_path) == 0
    assert "alerts: none open" in console.export_text()
