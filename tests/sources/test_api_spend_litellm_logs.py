"""LiteLLM spend-log exports (CSV and JSONL): the committed generated sample and broken files."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from sources.api_spend import litellm_spend_logs as logs
from sources.api_spend.formats import matching_formats
from sources.common import UnreadableFile
from tests.contract_helpers import load_in_memory
from tools.generate.litellm_logs import PRICES, generate

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples/inputs/api_spend/litellm_spend_logs_sample.csv"
HEADER = ",".join(logs.COLUMNS)


def test_sample_is_reproducible(tmp_path: Path) -> None:
    regenerated = tmp_path / "s.csv"
    generate(regenerated, 300)
    assert regenerated.read_bytes() == SAMPLE.read_bytes()


def test_sample_loads_and_matches_plain_csv_read() -> None:
    out = logs.parse_csv(SAMPLE)
    assert out.rejects == [] and out.warnings == []
    con = load_in_memory(out, "api_spend")
    with open(SAMPLE, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert con.execute("select count(*) from raw.api_requests").fetchone()[0] == len(rows) == 300
    assert con.execute("select sum(spend) from raw.api_requests").fetchone()[0] == sum(Decimal(r["spend"]) for r in rows)
    by_workload = dict(con.execute("select workload_id, count(*) from raw.api_requests group by 1").fetchall())
    assert by_workload == {"code-agent": 156, "chat-assistant-70b": 94, "nightly-evals": 50}
    # Billed failures exist (retry waste) and are kept.
    assert con.execute("select count(*) from raw.api_requests where status = 'failure' and spend > 0").fetchone()[0] == 5
    # First data row read by hand (line 2).
    first = con.execute(
        "select request_id, started_at::varchar, model, team_id, workload_id, prompt_tokens, cached_tokens, spend, "
        "retries, fallback, cache_hit from raw.api_requests where _source_line = 2"
    ).fetchone()
    assert first == ("chatcmpl-736021dc-335b-4691-a7bc-a885e6e01f74", "2025-04-14 01:04:23.45", "claude-3-5-haiku-20241022",
                     "research", "nightly-evals", 3474, 2084, Decimal("0.0026434"), 0, False, False)


def test_sample_spend_matches_catalog_prices() -> None:
    """Every successful, uncached request costs what litellm 1.55.0's prices say."""
    t = logs.parse_csv(SAMPLE).tables["api_requests"]
    for r in t.to_pylist():
        if r["cache_hit"]:
            assert Decimal(r["spend"]) == 0
            continue
        inp, out, cache = (Decimal(x) if x is not None else None for x in PRICES[r["model"]])
        cached = r["cached_tokens"] or 0
        expected = (r["prompt_tokens"] - cached) * inp + cached * (cache if cache is not None else inp) + r["completion_tokens"] * out
        assert Decimal(r["spend"]) == expected, r["request_id"]


def test_fallback_and_retries_extracted() -> None:
    con = duckdb.connect()
    con.register("t", logs.parse_csv(SAMPLE).tables["api_requests"])
    rel = con.sql("select provider, fallback, count(*) from t where workload_id = 'chat-assistant-70b' group by all order by all").fetchall()
    assert rel == [("hosted_vllm", False, 68), ("together_ai", True, 26)]
    assert con.sql("select sum(retries) from t").fetchone()[0] == 35


def test_detection() -> None:
    assert matching_formats(SAMPLE) == ["litellm_spend_logs_csv"]


def _row(**over) -> dict:
    base = {c: "" for c in logs.COLUMNS}
    base.update(request_id="r1", call_type="acompletion", api_key="abc", spend="0.5", prompt_tokens="10",
                completion_tokens="5", total_tokens="15", startTime="2025-04-14 10:00:00.000",
                endTime="2025-04-14 10:00:01.000", status="success", metadata='{"attempted_retries":2}',
                request_tags='["workload:w1"]')
    base.update(over)
    return base


def _write_csv(path: Path, rows: list[dict], extra_lines: dict[int, str] | None = None) -> Path:
    lines = [HEADER]
    for r in rows:
        with_quotes = []
        for c in logs.COLUMNS:
            v = r[c]
            with_quotes.append('"' + v.replace('"', '""') + '"' if any(ch in v for ch in ',"') else v)
        lines.append(",".join(with_quotes))
    for at, text in sorted((extra_lines or {}).items()):
        lines.insert(at - 1, text)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bad_rows_rejected_with_lines(tmp_path: Path) -> None:
    rows = [
        _row(request_id="a"),
        _row(request_id="b", spend="twelve"),
        _row(request_id="c", startTime="yesterday"),
        _row(request_id="d", endTime="2025-04-14 09:00:00"),
        _row(request_id="a"),
        _row(request_id="e", status="pending"),
        _row(request_id="f", spend="-1"),
        _row(request_id="", spend="1"),
        _row(request_id="g", startTime="2025-04-14T12:00:00+02:00", endTime="2025-04-14T10:00:02Z",
             api_key="sk-raw-secret", metadata="{not json", cache_hit="True"),
    ]
    # A line with too many columns at line 5 shifts every later data line by one.
    path = _write_csv(tmp_path / "logs.csv", rows, {5: "x,y," + ",".join(["z"] * 30)})
    out = logs.parse_csv(path)
    got = [(r.line, r.rule) for r in out.rejects]
    assert got == [(5, "malformed_line"), (3, "non_numeric"), (4, "invalid_timestamp"), (6, "period_reversed"),
                   (7, "duplicate_request_id"), (8, "invalid_status"), (9, "negative_spend"), (10, "missing_field")]
    t = out.tables["api_requests"].to_pylist()
    assert [(r["request_id"], r["_source_line"]) for r in t] == [("a", 2), ("g", 11)]
    g = t[1]
    # +02:00 converted to UTC; raw key hashed; invalid metadata warned, row kept.
    assert str(g["started_at"]) == "2025-04-14 10:00:00" and g["cache_hit"] is True
    assert g["api_key_hash"] != "sk-raw-secret" and len(g["api_key_hash"]) == 64
    assert g["retries"] is None and t[0]["retries"] == 2 and t[0]["workload_id"] == "w1"
    assert any("not valid JSON" in w for w in out.warnings) and any("sk-" in w for w in out.warnings)


def test_missing_required_column_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("request_id,call_type,startTime\nr1,acompletion,2025-04-14 10:00:00\n")
    with pytest.raises(UnreadableFile) as exc:
        logs.parse_csv(path)
    assert "spend" in str(exc.value)


def test_jsonl_same_as_csv(tmp_path: Path) -> None:
    generate(tmp_path / "s.jsonl", 300, fmt="jsonl")
    assert matching_formats(tmp_path / "s.jsonl") == ["litellm_spend_logs_jsonl"]
    a = logs.parse_jsonl(tmp_path / "s.jsonl").tables["api_requests"]
    b = logs.parse_csv(SAMPLE).tables["api_requests"]
    assert a.drop(["_source_line"]).to_pylist() == b.drop(["_source_line"]).to_pylist()
    assert a.column("_source_line").to_pylist() == [n - 1 for n in b.column("_source_line").to_pylist()]


def test_jsonl_broken_line_and_truncated_tail(tmp_path: Path) -> None:
    rec = json.dumps({k: v for k, v in _row().items()})
    path = tmp_path / "l.jsonl"
    path.write_text(rec + "\n" + '{"request_id": "x", "spend": 1' + "\n" + rec.replace('"r1"', '"r2"') + "\n" + rec[:40])
    out = logs.parse_jsonl(path)
    assert [(r.line, r.rule) for r in out.rejects] == [(2, "invalid_json"), (4, "invalid_json")]
    assert out.tables["api_requests"].column("request_id").to_pylist() == ["r1", "r2"]
