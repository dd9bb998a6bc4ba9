"""int_gpu_telemetry_hourly rebuilds every day when its SQL changes (int_gpu_telemetry_hourly_history_key),
and no day when nothing changed.

On a copy of the sample ledger, the key and the model run (incremental, no new file) three times:
- from the project as it is: no day is rebuilt (every day keeps its rows and build stamp);
- after its build, key and GPU-hour flag columns are dropped (a table built before the model stored them): every
  day is rebuilt once, the key stored on each, the flag back on its rows (the pre-hook adds the columns: dbt adding
  one itself, in a transaction of its own, made the build's commit fail on the altered table);
- from a copy of the dbt project whose macro `in_days` (macros/incremental_days.sql, which the model calls to
  bound its scan) is written another way: the key moves and every day is rebuilt, with the same rows.

The days, from the sample files (samples/inputs/usage): dcgm_chat70b_2025-04_constructed.csv has 1536 samples
on each of 2025-04-14 and 2025-04-15 (times 00:00Z to 23:45Z); the two nvidia-smi query CSVs one sample each,
at 2026/07/03 22:22:27 (H200 MIG) and 2026/07/14 08:12:53 (H100): 4 days of samples' own times. The four
Prometheus scrapes (*.prom) carry no time: their samples land on their file's landing day, the file's
modification time in UTC (warehouse/landing.py land_file). Every stored day is one of those; all are rebuilt.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from tests.dbt.ledger_nodes import change, copy_ledger, rebuilt_periods, run_models
from warehouse.home import DBT_DIR

MODEL = "int_gpu_telemetry_hourly"
KEY = f"{MODEL}_history_key"
USAGE_SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "inputs" / "usage"
TIMED_DAYS = {"2025-04-14", "2025-04-15", "2026-07-03", "2026-07-14"}
# in_days' predicate when there is no day to rebuild, written another way (same meaning)
IN_DAYS_EDIT = ("{%- if ranges | length == 0 -%}\n        false\n", "{%- if ranges | length == 0 -%}\n        (1 = 0)\n")


def _expected_days() -> list[str]:
    """The samples' own days and the landing days (UTC modification dates) of the scrapes without times."""
    landing = {datetime.fromtimestamp(p.stat().st_mtime, tz=UTC).date().isoformat()
               for p in USAGE_SAMPLES.glob("*.prom")}
    return sorted(TIMED_DAYS | landing)


def _days(ledger: Path) -> dict[str, tuple]:
    """Per stored day: (rows, newest build stamp, stored key)."""
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return {str(d): tuple(v) for d, *v in con.execute(
            f"select sample_date, count(*), max(x_built_at), max(x_history_key) from intermediate.{MODEL} "
            "group by sample_date").fetchall()}
    finally:
        con.close()


def _rows(ledger: Path) -> list[tuple]:
    """The model's rows without its build columns, sorted."""
    con = duckdb.connect(str(ledger), read_only=True)
    try:
        return con.execute(f"select * exclude (x_built_at, x_history_key) from intermediate.{MODEL} "
                           "order by all").fetchall()
    finally:
        con.close()


def _run(ledger: Path, project: Path = DBT_DIR) -> str:
    """An incremental run of the key and the model from `project`; dbt's output."""
    return run_models(ledger, [KEY, MODEL], project=project)


@pytest.fixture(scope="module")
def runs(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("telemetry_history_key")
    ledger = copy_ledger(Path(sample_run["home"]), base / "home", raw=True)
    found: dict = {"built": _days(ledger), "rows": _rows(ledger)}

    _run(ledger)
    found["unchanged"] = _days(ledger)

    change(ledger, [f"alter table intermediate.{MODEL} drop column x_history_key",
                    f"alter table intermediate.{MODEL} drop column x_built_at",
                    f"alter table intermediate.{MODEL} drop column x_first_of_gpu_hour"])
    found["log_upgrade"] = _run(ledger)
    found["upgraded"] = _days(ledger)
    found["upgraded_rows"] = _rows(ledger)

    project = base / "dbt"
    shutil.copytree(DBT_DIR, project, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    macros = project / "macros" / "incremental_days.sql"
    text = macros.read_text()
    assert text.count(IN_DAYS_EDIT[0]) == 1
    macros.write_text(text.replace(*IN_DAYS_EDIT))
    found["log_edited"] = _run(ledger, project)
    found["edited"] = _days(ledger)
    found["edited_rows"] = _rows(ledger)
    return found


def test_the_sample_days_are_the_hand_counted_ones(runs: dict) -> None:
    assert sorted(runs["built"]) == _expected_days()
    # the sample refresh stored one key on every day
    assert len({key for _, _, key in runs["built"].values()}) == 1


def test_an_unchanged_project_rebuilds_no_day(runs: dict) -> None:
    assert runs["unchanged"] == runs["built"]


def test_a_table_without_the_key_rebuilds_every_day_once(runs: dict) -> None:
    # stamped after the sample refresh's build (the stamps it had before its columns were dropped)
    assert rebuilt_periods(runs["built"], runs["upgraded"]) == _expected_days()
    assert "history-wide inputs changed" in runs["log_upgrade"]
    # the key stored is today's (the project's, as the sample refresh stored it); the rows are the same
    assert {key for _, _, key in runs["upgraded"].values()} == {key for _, _, key in runs["built"].values()}
    assert runs["upgraded_rows"] == runs["rows"]


def test_an_edited_macro_the_model_calls_rebuilds_every_day(runs: dict) -> None:
    assert rebuilt_periods(runs["upgraded"], runs["edited"]) == _expected_days()
    assert "history-wide inputs changed" in runs["log_edited"]
    keys = {key for _, _, key in runs["edited"].values()}
    assert len(keys) == 1 and keys != {key for _, _, key in runs["upgraded"].values()}
    assert runs["edited_rows"] == runs["rows"]
