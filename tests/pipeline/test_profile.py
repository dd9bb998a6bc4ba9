"""Where a refresh's time went (pipelines/profile.py): the stage before the Dagster run, where the inputs are
landed and compared with the last build's, is listed first and counted in the total. A first refresh reads
every input byte there (at 1,000 GPUs x 30 days 4.5 s of a 112.9 s refresh), which the run's steps alone left out."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from pipelines.profile import BEFORE_RUN_STAGE, format_profile, profile_of, stage_seconds, step_spans


def test_the_stage_before_the_run_comes_first_and_the_total_covers_it() -> None:
    profile = profile_of({"landing": 0.0, "parse + load usage": 39.44, "dbt build": 37.36}, 110.34, 12.26,
                         {"model": 50.1, "test": 6.6})
    # 12.26 s before the run rounds to 12.3; the steps keep their order after it
    assert list(profile["stages_s"].items()) == [(BEFORE_RUN_STAGE, 12.3), ("landing", 0.0),
                                                 ("parse + load usage", 39.44), ("dbt build", 37.36)]
    assert profile["total_s"] == 110.3
    assert profile["dbt_node_types_s"] == {"model": 50.1, "test": 6.6}
    lines = format_profile(profile).splitlines()
    assert lines[1].split() == [*BEFORE_RUN_STAGE.split(), "12.3"]
    # 110.3 - (12.3 + 0.0 + 39.44 + 37.36) = 21.2 s outside the stages
    assert lines[-2].split()[:3] == ["outside", "the", "stages"] and lines[-2].split()[-1] == "21.2"
    assert lines[-1].split() == ["total", "(wall", "clock)", "110.3"]


def _event(kind: str, step: str | None, at: float) -> SimpleNamespace:
    return SimpleNamespace(timestamp=at, dagster_event=SimpleNamespace(event_type_value=kind, step_key=step))


def test_steps_span_from_their_start_to_their_success_or_failure() -> None:
    events = [_event("RUN_START", None, 9.0), _event("STEP_START", "raw__usage", 10.0),
              _event("STEP_START", "ledger_dbt_assets", 12.5), _event("STEP_SUCCESS", "raw__usage", 12.0),
              _event("STEP_OUTPUT", "ledger_dbt_assets", 13.0), _event("STEP_FAILURE", "ledger_dbt_assets", 15.25)]
    assert step_spans(events) == [("raw__usage", 10.0, 12.0), ("ledger_dbt_assets", 12.5, 15.25)]
    # 12.0 - 10.0 = 2.0 s; 15.25 - 12.5 = 2.75 s, rounded to 2.8
    assert stage_seconds(events) == {"parse + load usage": 2.0, "dbt build": 2.8}


def test_a_sample_refresh_records_the_stage_before_its_run(sample_run: dict) -> None:
    assert sample_run["ok"], sample_run["reason"]
    profile = json.loads((Path(sample_run["home"]) / "last_refresh.json").read_text())["profile"]
    stages = list(profile["stages_s"])
    assert stages[0] == BEFORE_RUN_STAGE and "dbt build" in stages and "publish" in stages
    # the stages run one after another inside the total (each rounded to 0.1 s)
    assert sum(profile["stages_s"].values()) <= profile["total_s"] + 0.05 * len(stages)
