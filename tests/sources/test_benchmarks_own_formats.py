"""Our own CSV record formats: the bundled sample files and broken inputs."""

from __future__ import annotations

import csv
from datetime import date, datetime
from pathlib import Path

import pytest

from sources.benchmarks import own_formats
from sources.catalog import recognise
from sources.common import UnreadableFile
from tests.conftest import REPO
from tests.contract_helpers import load_in_memory

SAMPLES = REPO / "samples" / "inputs" / "benchmarks"
SPEC = {s.table: s for s in own_formats.SPECS}
PARSE = {s.table: own_formats.make_parse(s) for s in own_formats.SPECS}


@pytest.mark.parametrize(
    "name,table,rows",
    [("training_runs.csv", "training_runs", 5), ("eval_runs.csv", "eval_runs", 3), ("media_batches.csv", "media_batches", 5),
     ("memory_fit_tests.csv", "memory_fit_tests", 6), ("ops_tests.csv", "ops_tests", 7), ("quality_outcomes.csv", "quality_outcomes", 12)],
)
def test_sample_files(name: str, table: str, rows: int) -> None:
    path = SAMPLES / name
    fmt = recognise(path, "benchmarks")
    assert fmt is not None and fmt.name == SPEC[table].name
    out = fmt.parse(path)
    assert out.rejects == [] and out.warnings == []
    with path.open(newline="") as fh:
        assert sum(1 for _ in csv.DictReader(fh)) == rows == out.tables[table].num_rows
    con = load_in_memory(out, "benchmarks")
    assert con.sql(f"select count(*) from raw.{table}").fetchone()[0] == rows


def test_training_values_and_utc() -> None:
    out = PARSE["training_runs"](SAMPLES / "training_runs.csv")
    rows = {r["run_id"]: r for r in out.tables["training_runs"].to_pylist()}
    ft = rows["tr-2025-04-chatft-01"]
    assert ft["started_at"] == datetime(2025, 4, 2, 7, 15)  # 09:15+02:00 -> UTC
    assert ft["reached_target"] is True and ft["run_kind"] == "full_finetune"
    assert rows["tr-2025-03-pretrain7b-a"]["outcome"] == "failed" and rows["tr-2025-03-pretrain7b-a"]["restarts"] == 6
    assert {r["workload_id"] for r in rows.values()} == {"llm-pretrain-7b", "chat-ft-llama8b", "support-lora-8b"}
    assert out.tables["training_runs"]["_source_line"].to_pylist() == [2, 3, 4, 5, 6]


def test_quality_outcomes_add_up() -> None:
    out = PARSE["quality_outcomes"](SAMPLES / "quality_outcomes.csv")
    con = load_in_memory(out, "benchmarks")
    bad = con.sql("select count(*) from raw.quality_outcomes where accepted + rejected_quality + rejected_safety <> produced").fetchone()[0]
    assert bad == 0
    assert con.sql("select day from raw.quality_outcomes where workload_id = 'code-agent' order by day").fetchall() == [
        (date(2025, 4, 14),), (date(2025, 4, 15),)]


def test_media_quality_consistent_with_batches() -> None:
    media = PARSE["media_batches"](SAMPLES / "media_batches.csv").tables["media_batches"].to_pylist()
    img_15 = [m for m in media if m["workload_id"] == "product-images" and m["started_at"].date() == date(2025, 4, 15)]
    q = [r for r in PARSE["quality_outcomes"](SAMPLES / "quality_outcomes.csv").tables["quality_outcomes"].to_pylist()
         if r["workload_id"] == "product-images" and r["day"] == date(2025, 4, 15)][0]
    assert sum(m["produced"] for m in img_15) == q["produced"] and sum(m["accepted"] for m in img_15) == q["accepted"]
    video = [m for m in media if m["media_kind"] == "video"]
    assert all(m["seconds_of_video"] > 0 for m in video)


def test_bad_rows_rejected_good_rows_kept(tmp_path: Path) -> None:
    p = tmp_path / "ops.csv"
    p.write_text(
        "test_id,workload_id,gpu_model,kind,seconds,succeeded,notes,extra_col\n"
        "t1,chat-assistant-70b,A100,cold_start,600,true,ok,x\n"
        "t2,chat-assistant-70b,A100,reboot,10,true,bad kind,x\n"
        "t3,chat-assistant-70b,A100,drain,-5,true,negative,x\n"
        "t4,chat-assistant-70b,A100,drain,abc,true,not a number,x\n"
        "t5,chat-assistant-70b,A100,drain,5,maybe,bad bool,x\n"
        "t1,chat-assistant-70b,A100,drain,5,false,duplicate,x\n"
        ",chat-assistant-70b,A100,drain,5,false,no key,x\n"
    )
    out = PARSE["ops_tests"](p)
    assert out.tables["ops_tests"]["test_id"].to_pylist() == ["t1"]
    got = sorted((r.line, r.rule) for r in out.rejects)
    assert got == [(3, "unknown_kind"), (4, "negative_value"), (5, "non_numeric"), (6, "invalid_boolean"),
                   (7, "duplicate_key"), (8, "missing_key")]
    assert any("extra_col" in w for w in out.warnings)
    load_in_memory(out, "benchmarks")


def test_period_reversed_and_bad_timestamp(tmp_path: Path) -> None:
    p = tmp_path / "media.csv"
    p.write_text(
        "batch_id,workload_id,media_kind,started_at,ended_at,gpu_hours,produced,accepted\n"
        "b1,product-images,image,2025-04-14T08:00:00Z,2025-04-14T06:00:00Z,2,10,5\n"
        "b2,product-images,image,14/04/2025,2025-04-14T06:00:00Z,2,10,5\n"
        "b3,product-images,image,2025-04-14T05:00:00Z,2025-04-14T06:00:00Z,2,10,11\n"
        "b4,promo-video,video,2025-04-14T05:00:00Z,2025-04-14T06:00:00Z,2,10,9\n"
    )
    out = PARSE["media_batches"](p)
    assert sorted((r.line, r.rule) for r in out.rejects) == [(2, "period_reversed"), (3, "invalid_timestamp"), (4, "accepted_exceeds_produced")]
    assert out.tables["media_batches"]["batch_id"].to_pylist() == ["b4"]


def _write_rows(path: Path, rows: list[dict[str, str]], fields: list[str]) -> Path:
    """`rows` as a CSV of `fields` (columns not among them left out)."""
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize("name,table", [("training_runs.csv", "training_runs"), ("eval_runs.csv", "eval_runs"),
                                        ("media_batches.csv", "media_batches"), ("ops_tests.csv", "ops_tests")])
def test_a_row_without_its_workload_is_rejected_and_the_others_kept(tmp_path: Path, name: str, table: str) -> None:
    """Each sample with workload_id emptied on its second row (file line 3, padded with spaces): that row is a
    missing_value reject; every other row loads, as the sample's own count minus one. Before, the row loaded
    with a NULL workload and the marts' blocking checks withheld the whole publication."""
    rows = list(csv.DictReader((SAMPLES / name).open(newline="")))
    rows[1]["workload_id"] = "  "
    out = PARSE[table](_write_rows(tmp_path / name, rows, list(rows[0])))
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [(3, "missing_value", "workload_id")]
    assert out.tables[table].num_rows == len(rows) - 1


@pytest.mark.parametrize("name,table", [("training_runs.csv", "training_runs"), ("eval_runs.csv", "eval_runs"),
                                        ("media_batches.csv", "media_batches")])
def test_a_run_without_its_start_is_rejected_and_the_others_kept(tmp_path: Path, name: str, table: str) -> None:
    """started_at emptied on the third row (file line 4): a missing_value reject; before, an eval run's cost
    lines reached the marts with no period and the blocking checks withheld the publication. The same sample
    without the started_at column at all (eval runs and media batches may omit it): every row rejected."""
    rows = list(csv.DictReader((SAMPLES / name).open(newline="")))
    rows[2]["started_at"] = ""
    out = PARSE[table](_write_rows(tmp_path / name, rows, list(rows[0])))
    assert [(r.line, r.rule, r.column) for r in out.rejects] == [(4, "missing_value", "started_at")]
    assert out.tables[table].num_rows == len(rows) - 1
    if "started_at" in SPEC[table].required:
        return
    out = PARSE[table](_write_rows(tmp_path / name, rows, [f for f in rows[0] if f != "started_at"]))
    assert sorted(r.line for r in out.rejects if r.column == "started_at") == list(range(2, len(rows) + 2))
    assert out.tables[table].num_rows == 0


def test_missing_required_header_is_unreadable(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_text("workload_id,day,produced\nx,2025-01-01,1\n")
    assert recognise(p, "benchmarks") is None
    with pytest.raises(UnreadableFile):
        PARSE["quality_outcomes"](p)
