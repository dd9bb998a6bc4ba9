"""LiteLLM CSV one-pass parse: the work moved out of per-value SQL keeps its exact meaning.

Text trimming (pyarrow `_arrow_clean` / SQL `_clean`) must equal DuckDB's nullif(trim(x), '')
(which strips the Unicode space separators, not tabs); duplicate request ids are found after the
query in pyarrow and must follow the SQL rule order (a row breaking another rule keeps that rule,
and still makes later copies duplicates).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from sources.api_spend import _litellm_sql as logs_sql
from sources.api_spend import litellm_spend_logs as logs

HEADER = ",".join(logs.COLUMNS)
ZS = [" ", "\u00a0", "\u1680", "\u2000", "\u2009", "\u200a", "\u202f", "\u205f", "\u3000"]


def _row(**over: str) -> dict[str, str]:
    base = {c: "" for c in logs.COLUMNS}
    base.update(request_id="r1", call_type="acompletion", api_key="abc", spend="0.5", prompt_tokens="10",
                completion_tokens="5", total_tokens="15", startTime="2025-04-14 10:00:00.000",
                endTime="2025-04-14 10:00:01.000", status="success")
    base.update(over)
    return base


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    def cell(v: str) -> str:
        return '"' + v.replace('"', '""') + '"' if any(ch in v for ch in ',"\n') else v

    path.write_text("\n".join([HEADER] + [",".join(cell(r[c]) for c in logs.COLUMNS) for r in rows]) + "\n",
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("value", ["a", " a ", "\ta", "a\n", "é", " é\u3000", "\u00a0x\u2009", "   ", "",
                                   "\u205f", None, *(z + "v" + z for z in ZS)])
def test_arrow_clean_equals_duckdb_trim(value: str | None) -> None:
    col = pa.chunked_array([pa.array(["plain", value], pa.string())])
    expected = duckdb.connect().execute("select nullif(trim(?::varchar), '')", [value]).fetchone()[0]
    assert logs_sql._arrow_clean(col).to_pylist() == ["plain", expected]
    sql = duckdb.connect().execute(f"select {logs_sql._clean('x')} from (select ?::varchar as x)", [value]).fetchone()[0]
    assert sql == expected


def test_padded_text_columns_trimmed_like_duckdb(tmp_path: Path) -> None:
    rows = [
        _row(request_id="u0", team_id=" t ", model="\u00a0m\u3000", call_type="   ", session_id="\tz"),
        _row(request_id="\u2009u1", api_key="\u00a0sk-secret", end_user="é ", user="\u205f"),
        _row(request_id="u2", team_id="plain"),
    ]
    out = logs.parse_csv(_write(tmp_path / "pad.csv", rows))
    assert out.rejects == []
    t = out.tables["api_requests"].to_pylist()
    assert [r["request_id"] for r in t] == ["u0", "u1", "u2"]
    assert (t[0]["team_id"], t[0]["model"], t[0]["call_type"], t[0]["session_id"]) == ("t", "m", None, "\tz")
    assert (t[1]["end_user"], t[1]["user_id"]) == ("é", None)
    assert len(t[1]["api_key_hash"]) == 64 and "sk-" not in t[1]["api_key_hash"]  # NBSP-padded raw key hashed
    assert t[2]["team_id"] == "plain"
    assert any("raw 'sk-' API key" in w for w in out.warnings)


def test_duplicates_follow_rule_order(tmp_path: Path) -> None:
    rows = [
        _row(request_id="a", spend="x"),        # line 2: non_numeric (first copy of a)
        _row(request_id="a"),                   # line 3: duplicate of a rejected row
        _row(request_id=" b "),                 # line 4: kept (id trimmed to b)
        _row(request_id="b", status="weird"),   # line 5: invalid_status wins over duplicate
        _row(request_id="b"),                   # line 6: duplicate, raw value reported
        _row(request_id="c"),                   # line 7: kept
    ]
    out = logs.parse_csv(_write(tmp_path / "dup.csv", rows))
    assert [(r.line, r.rule, r.column, r.value) for r in out.rejects] == [
        (2, "non_numeric", "spend", "x"),
        (3, "duplicate_request_id", "request_id", "a"),
        (5, "invalid_status", "status", "weird"),
        (6, "duplicate_request_id", "request_id", "b"),
    ]
    t = out.tables["api_requests"]
    assert t.column("request_id").to_pylist() == ["b", "c"]
    assert t.column("_source_line").to_pylist() == [4, 7]
