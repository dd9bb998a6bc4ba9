"""Secrets and untrusted names: API keys never reach the warehouse, logs or errors.

Keys come only from the environment. A refresh whose LiteLLM spend log carries the planted keys
in its `api_key` column (as a raw `sk-` key, a key with a leading space, and inside a malformed
line that is quarantined) must leave no trace of them anywhere under HOME except landing/<family>/,
the immutable copy of the inputs as received (the architecture's rule: landing stores every input
byte for byte so everything can be rebuilt; hashing or editing there would break that, so the
protection is that nothing downstream keeps the key). The landing manifest is checked too.
Untrusted file names never become paths: a landed file is `<sha256><ext>` inside
landing/<family>/ and nothing is written outside HOME.
The fetchers never put a key in a log line or an exception, even when the server echoes it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from werkzeug import Request, Response

from sources.api_spend import fetch as api_fetch
from sources.prices import fetch as price_fetch
from tests import prefetch
from tests.conftest import SAMPLES

OPENAI_KEY = "sk-test-PLANTED-123"
ANTHROPIC_KEY = "sk-ant-admin01-test-PLANTED-456"
MARKER = "PLANTED"  # a part of both keys: also catches truncated or re-encoded copies
PATHLIKE = "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.csv"  # URL-encoded ../../etc/passwd (a leading dot would be skipped as hidden)
SHELLISH = "$(touch pwned) `id` ; rm -rf x"  # + ".csv"


def _litellm_log() -> str:
    """Five real sample rows: three with raw keys, one with a padded key, one malformed with a key."""
    lines = (SAMPLES / "api_spend" / "litellm_spend_logs_sample.csv").read_text().splitlines()
    header, rows = lines[0], lines[1:6]
    key_col = header.split(",").index("api_key")

    def with_key(row: str, key: str) -> str:
        cells = row.split(",")
        assert len(cells[key_col]) == 64  # the sample's hashed key, replaced by a raw one
        cells[key_col] = key
        return ",".join(cells)

    return "\n".join([
        header,
        with_key(rows[0], OPENAI_KEY),
        with_key(rows[1], ANTHROPIC_KEY),
        with_key(rows[2], f'" {OPENAI_KEY}"'),  # leading space inside the quoted value
        with_key(rows[3], OPENAI_KEY) + ",surplus,fields",  # malformed: quarantined with its text
        rows[4],
    ]) + "\n"


FOCUS_SECRETS = {  # credentials planted in FOCUS Tags (all carry MARKER)
    "deploy-token": "sk-ant-api03-PLANTED-0123456789abcdef",
    "aws_access_key_id": "AKIAPLANTED012345678",
    "db_password": "PLANTED-hunter2",
    "ci": "ghp_PLANTED0123456789abcdefXYZ",
}


def _focus_with_secret_tags() -> str:
    """Three real FOCUS sample rows whose Tags carry the planted credentials, plus a malformed line
    (a surplus field: quarantined with its text) carrying the same Tags."""
    import csv
    import io
    import json

    lines = (SAMPLES / "billing" / "focus_1.0_sample_1000_multicloud.csv").read_text().splitlines()
    header, *rows = list(csv.reader(lines[:5]))
    tag_col, acct = header.index("Tags"), header.index("BillingAccountId")
    for r in rows:  # an account of its own: the sample's invoice totals must still reconcile
        r[acct] = "ACCT-SECRETS"
    keys = list(FOCUS_SECRETS)
    rows[0][tag_col] = json.dumps({"team": "research", keys[0]: FOCUS_SECRETS[keys[0]]})
    rows[1][tag_col] = json.dumps({keys[1]: FOCUS_SECRETS[keys[1]], keys[2]: FOCUS_SECRETS[keys[2]]})
    rows[2][tag_col] = json.dumps({keys[3]: FOCUS_SECRETS[keys[3]]})
    rows[3][tag_col] = json.dumps(FOCUS_SECRETS)
    desc = header.index("ChargeDescription")
    rows[1][desc] = f"GPU usage; Authorization: {DESCRIPTION_SECRET}"  # free text keeps its words
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows[:3], rows[3] + ["surplus"]])
    return buf.getvalue()


DESCRIPTION_SECRET = "Bearer PLANTEDdesc0123456789abcdef"
K8S_LABELS = {"deploy_token": "sk-PLANTEDk8s0123456789abcdef", "db-password": "PLANTED-pw"}
COMMAND_SECRETS = ("hf_PLANTEDabcdefghijklmnopqrstuvwx01", "PLANTEDkey0123")  # --hf-token, --api-key
METADATA_SECRETS = {"user_api_key": "sk-PLANTEDmeta0123456789abc", "authorization": "Bearer PLANTEDhdr0123456789"}


def _opencost_with_secret_labels() -> str:
    """The real OpenCost sample with credentials planted in one allocation's Kubernetes labels."""
    import json

    doc = json.loads((SAMPLES / "usage" / "opencost_allocation_compute_response_example.json").read_text())
    alloc = next(iter(doc["data"][0].values()))
    alloc["properties"]["labels"] = {"app": "vllm", **K8S_LABELS}
    return json.dumps(doc)


def _vllm_with_secret_command(dest: Path) -> None:
    """A real vLLM result and its .commands.json sidecar whose client command carries two credentials."""
    import json

    stem = "llama33-70b__01_tp8_pp1__serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_01"
    shutil.copy(SAMPLES / "benchmarks" / f"{stem}.json", dest / f"{stem}.json")
    side = json.loads((SAMPLES / "benchmarks" / f"{stem}.commands.json").read_text())
    side["client_command"] += f" --hf-token {COMMAND_SECRETS[0]} --api-key={COMMAND_SECRETS[1]} --max-tokens 512"
    (dest / f"{stem}.commands.json").write_text(json.dumps(side, indent=2))


def _with_secret_metadata(log: str) -> str:
    """The LiteLLM log with credentials planted in the last (good) row's metadata JSON."""
    import csv
    import io
    import json

    lines = log.splitlines()
    header = next(csv.reader([lines[0]]))
    last = next(csv.reader([lines[-1]]))
    meta = json.loads(last[header.index("metadata")] or "{}")
    meta.update({"user_api_key": METADATA_SECRETS["user_api_key"],
                 "headers": {"authorization": METADATA_SECRETS["authorization"]}})
    last[header.index("metadata")] = json.dumps(meta)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(last)
    return "\n".join(lines[:-1]) + "\n" + buf.getvalue()


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def build_secret_run(root: Path) -> dict:
    """The refresh with planted keys (a tests/prefetch.py job; `root` is empty and holds only inputs and home)."""
    from pipelines.cli import execute_refresh

    inputs, home = root / "inputs", root / "home"
    shutil.copytree(SAMPLES / "registry", inputs / "registry")
    (inputs / "billing").mkdir(parents=True)
    shutil.copy(SAMPLES / "billing" / "focus_1.0_sample_1000_multicloud.csv", inputs / "billing" / PATHLIKE)
    shutil.copy(SAMPLES / "billing" / "invoice_totals.csv", inputs / "billing" / "invoice_totals.csv")
    (inputs / "billing" / "focus_secret_tags.csv").write_text(_focus_with_secret_tags())
    (inputs / "api_spend").mkdir()
    (inputs / "api_spend" / f"{SHELLISH}.csv").write_text(_with_secret_metadata(_litellm_log()))
    (inputs / "usage").mkdir()
    (inputs / "usage" / "opencost_secret_labels.json").write_text(_opencost_with_secret_labels())
    (inputs / "benchmarks").mkdir()
    _vllm_with_secret_command(inputs / "benchmarks")
    before_inputs, before_root = _tree(inputs), {p.name for p in root.iterdir()}
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", OPENAI_KEY)
    mp.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    try:
        ok, _, reason = execute_refresh(home, inputs)
    finally:
        mp.undo()
    return {"ok": ok, "reason": reason, "root": root, "home": home, "inputs": inputs,
            "before_inputs": before_inputs, "before_root": before_root}


@pytest.fixture(scope="module")
def secret_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return prefetch.result("secret_run", tmp_path_factory)


def test_refresh_published(secret_run: dict) -> None:
    assert secret_run["ok"], secret_run["reason"]


def test_planted_keys_appear_nowhere_under_home_but_the_landed_inputs(secret_run: dict) -> None:
    home = secret_run["home"]
    landed_inputs = {p for p in (home / "landing").iterdir() if p.is_dir()}
    checked, hits = [], []
    for path in sorted(home.rglob("*")):
        if not path.is_file() or any(d in path.parents for d in landed_inputs):
            continue
        checked.append(path.relative_to(home).as_posix())
        if MARKER.encode() in path.read_bytes():
            hits.append(path.relative_to(home).as_posix())
    assert hits == []
    assert {"ledger.duckdb", "serving.duckdb", "logs/last_run.log", "landing/manifest.jsonl"} <= set(checked)


@pytest.mark.parametrize("db", ["ledger.duckdb", "serving.duckdb"])
def test_no_string_column_holds_a_planted_key(secret_run: dict, db: str) -> None:
    """DuckDB compresses strings on disk, so a byte grep is not enough: scan every text value."""
    con = duckdb.connect(str(secret_run["home"] / db), read_only=True)
    try:
        cols = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns "
            "where data_type in ('VARCHAR', 'JSON') and table_schema not in ('information_schema', 'pg_catalog')"
        ).fetchall()
        assert cols
        hits = [
            (s, t, c) for s, t, c in cols
            if con.execute(f'select count(*) from "{s}"."{t}" where "{c}"::varchar like ?', [f"%{MARKER}%"]).fetchone()[0]
        ]
    finally:
        con.close()
    assert hits == []


def test_raw_keys_are_stored_as_their_sha256(secret_run: dict) -> None:
    con = duckdb.connect(str(secret_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        hashes = {r[0] for r in con.execute("select api_key_hash from raw.api_requests").fetchall()}
        rejects = con.execute("select rule, line from audit.dq_rejects where source_family = 'api_spend'").fetchall()
    finally:
        con.close()
    assert hashlib.sha256(OPENAI_KEY.encode()).hexdigest() in hashes
    assert hashlib.sha256(ANTHROPIC_KEY.encode()).hexdigest() in hashes
    assert rejects == [("malformed_line", 5)]  # the quarantined line is named, its key is not kept


def test_focus_tag_credentials_are_stored_as_their_sha256(secret_run: dict) -> None:
    """Each planted tag value is in raw and in the published ledger only as sha256:<hex>;
    the malformed line is quarantined by line, without its credentials."""
    import json

    from sources.secrets import redact

    want = {k: redact(v) for k, v in FOCUS_SECRETS.items()}
    for db, sql in (("ledger.duckdb", "select Tags::varchar from raw.billing_charges where _source_file = ?"),
                    ("serving.duckdb", "select Tags::varchar from ledger_focus where x_source_file = ?")):
        con = duckdb.connect(str(secret_run["home"] / db), read_only=True)
        try:
            tags = [json.loads(t) for (t,) in con.execute(sql, ["focus_secret_tags.csv"]).fetchall()]
            rejects = con.execute("select rule, line from " + ("audit.dq_rejects" if db == "ledger.duckdb" else "dq_rejects")
                                  + " where file_name = 'focus_secret_tags.csv'").fetchall()
        finally:
            con.close()
        stored = {k: v for t in tags for k, v in t.items() if k in want}
        assert stored == want, db
        assert {t.get("team") for t in tags} >= {"research"}  # ordinary tags are untouched
        assert rejects == [("malformed_row", 5)]


def test_labels_commands_descriptions_and_metadata_keep_only_hashes(secret_run: dict) -> None:
    """The shared load-time scrub (sources/secrets.py) covers every family: a Kubernetes
    label, a benchmark command line and a bill's ChargeDescription keep their other words; the
    credentials are stored as sha256:<hex> of the credential alone. Each file's count is published."""
    import json

    from sources.secrets import redact

    con = duckdb.connect(str(secret_run["home"] / "ledger.duckdb"), read_only=True)
    try:
        labels = [json.loads(v) for (v,) in con.execute(
            "select labels::varchar from raw.gpu_jobs where _source_file = 'opencost_secret_labels.json' "
            "and labels is not null").fetchall()]
        [command] = [c for (c,) in con.execute("select client_command from raw.benchmark_run_commands").fetchall()]
        [desc] = [d for (d,) in con.execute(
            "select ChargeDescription from raw.billing_charges where _source_file = 'focus_secret_tags.csv' "
            "and ChargeDescription like 'GPU usage;%'").fetchall()]
    finally:
        con.close()
    assert labels == [{"app": "vllm", "deploy_token": redact(K8S_LABELS["deploy_token"]),
                       "db-password": redact(K8S_LABELS["db-password"])}]
    assert f"--hf-token {redact(COMMAND_SECRETS[0])} --api-key={redact(COMMAND_SECRETS[1])} --max-tokens 512" in command
    assert command.startswith("python3 benchmark_serving.py") and "--num-prompts=200" in command
    assert desc == f"GPU usage; Authorization: {redact(DESCRIPTION_SECRET)}"
    serving = duckdb.connect(str(secret_run["home"] / "serving.duckdb"), read_only=True)
    try:
        counts = dict(serving.execute("select source_file, redactions from source_files where redactions > 0").fetchall())
    finally:
        serving.close()
    # cells changed per file by the load-time scrub: opencost 1 (the labels cell); vLLM sidecar 1 (its
    # command); FOCUS 4: the Tags of the 3 good lines + line 3's ChargeDescription (the malformed
    # line's text is scrubbed by the parser before its 200-character cut, so the scrub finds it clean).
    # The LiteLLM file has none: its parser hashes api_key itself and keeps no metadata column.
    assert counts == {"opencost_secret_labels.json": 1,
                      "llama33-70b__01_tp8_pp1__serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_01"
                      ".commands.json": 1, "focus_secret_tags.csv": 4}


def test_landed_names_come_from_content_and_nothing_is_written_outside_home(secret_run: dict) -> None:
    home, inputs, root = secret_run["home"], secret_run["inputs"], secret_run["root"]
    for family, name in (("billing", PATHLIKE), ("api_spend", f"{SHELLISH}.csv")):
        digest = hashlib.sha256((inputs / family / name).read_bytes()).hexdigest()
        assert (home / "landing" / family / f"{digest}.csv").is_file()
    for path in (home / "landing").rglob("*"):
        rel = path.relative_to(home / "landing")
        if path.is_file() and rel.as_posix() != "manifest.jsonl":
            assert len(rel.parts) == 2 and re.fullmatch(r"[0-9a-f]{64}(\.[a-z0-9]{1,8}){0,2}", rel.parts[1]), rel
    assert _tree(inputs) == secret_run["before_inputs"]  # inputs are never touched
    assert {p.name for p in root.iterdir()} == secret_run["before_root"] | {"home"}  # nothing beside HOME
    # No path was built from the untrusted names: no etc/, passwd or pwned anywhere but the inputs.
    stray = [p for p in root.rglob("*") if inputs not in p.parents
             and (p.name in ("etc", "passwd", "passwd.csv", "pwned") or "%2F" in p.name or "$(" in p.name)]
    assert stray == []
    assert not any(p.name == "pwned" for p in Path.cwd().iterdir())


# ---- fetchers: the key never appears in a log line or an exception --------------------------

def _echo_key(status: int):
    def handler(request: Request) -> Response:
        # A hostile or careless server echoes the credential it received (or a planted one).
        seen = (request.headers.get("x-api-key") or request.headers.get("Authorization", "").removeprefix("Bearer ")
                or request.args.get("api_key", ""))
        assert MARKER in seen  # the client did send the planted key (header for API spend, query for prices)
        padding = "x" * 285  # puts the key across the fetcher's 300-character body excerpt
        return Response(f'{padding}{seen} {{"error": "invalid key {seen}"}}', status=status)
    return handler


def _assert_clean(caplog: pytest.LogCaptureFixture, *texts: str) -> None:
    # The test server's own access log (werkzeug) prints what the client sent; it is not our code.
    logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("werkzeug"))
    for text in (logged, *texts):
        assert MARKER not in text, text


@pytest.mark.parametrize("status", [401, 500])
def test_api_spend_fetcher_never_logs_or_raises_the_key(httpserver, caplog, monkeypatch, status: int) -> None:
    monkeypatch.setenv("OPENAI_ADMIN_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_ADMIN_KEY", ANTHROPIC_KEY)
    httpserver.expect_request("/v1/organization/costs").respond_with_handler(_echo_key(status))
    httpserver.expect_request("/anthropic/cost_report").respond_with_handler(_echo_key(status))
    caplog.set_level(logging.DEBUG)
    fast = {"max_retries": 1, "sleep": lambda s: None}
    with pytest.raises(api_fetch.FetchError) as openai_err:
        api_fetch.fetch_openai_costs(1730419200, base_url=httpserver.url_for("/v1"), **fast)
    with pytest.raises(api_fetch.FetchError) as anthropic_err:
        api_fetch.fetch_anthropic_report(httpserver.url_for("/anthropic/cost_report"),
                                         "2025-04-01T00:00:00Z", "2025-04-02T00:00:00Z", **fast)
    assert str(status) in str(openai_err.value)
    _assert_clean(caplog, str(openai_err.value), repr(openai_err.value), str(anthropic_err.value),
                  repr(anthropic_err.value))


def test_api_spend_fetcher_connection_error_is_clean(caplog, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_ADMIN_KEY", OPENAI_KEY)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(api_fetch.FetchError) as err:
        api_fetch.fetch_openai_costs(1730419200, base_url="http://127.0.0.1:9/v1", max_retries=1, sleep=lambda s: None)
    _assert_clean(caplog, str(err.value), repr(err.value))


@pytest.mark.parametrize("status", [401, 500])
def test_price_fetcher_never_logs_or_returns_the_key(httpserver, caplog, monkeypatch, status: int) -> None:
    """Price pages need no key; one in the environment or in a source's query never leaks."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    httpserver.expect_request("/prices").respond_with_handler(_echo_key(status))
    caplog.set_level(logging.INFO)  # urllib3's DEBUG lines print request URLs: query keys are not for prices
    settings = price_fetch.FetchSettings(timeout_s=5, max_retries=1, backoff_s=0.0)
    result = price_fetch.fetch_source({"name": "echo", "url": httpserver.url_for("/prices"),
                                       "params": {"api_key": os.environ["OPENAI_API_KEY"]}},
                                      settings, sleep=lambda s: None)
    assert not result.ok and str(status) in result.error
    _assert_clean(caplog, result.error)


def test_price_fetcher_connection_error_is_clean(caplog) -> None:
    """requests names the full URL (query included) in connection errors: the fetcher must not keep it."""
    caplog.set_level(logging.INFO)
    settings = price_fetch.FetchSettings(timeout_s=2, max_retries=1, backoff_s=0.0)
    result = price_fetch.fetch_source({"name": "down", "url": "http://127.0.0.1:9/prices",
                                       "params": {"api_key": OPENAI_KEY}}, settings, sleep=lambda s: None)
    assert not result.ok and "ConnectionError" in result.error
    _assert_clean(caplog, result.error)


def test_data_quality_reader_lists_the_redactions_per_file(secret_run: dict) -> None:
    """What the Data quality page shows (warehouse/serving_quality.py): the same counts, largest first."""
    from warehouse.serving_quality import redactions_by_file

    got = redactions_by_file(secret_run["home"] / "serving.duckdb")
    assert list(zip(got["source_file"], got["redactions"]))[0] == ("focus_secret_tags.csv", 4)
    assert sorted(got["redactions"].tolist()) == [1, 1, 4]
    assert got.loc[got["source_file"] == "focus_secret_tags.csv", "redacted_columns"].item() == \
        "billing_charges.ChargeDescription 1, billing_charges.Tags 3"
