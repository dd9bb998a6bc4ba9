"""Credentials that used to survive the scrubber: a JWT's signature, a password in a URL's
user-info, a token in a file name. Each is stored only as `sha256:<hex>` (sources/secrets.py), in
every text field and wherever a file name is recorded (manifest, hash cache, audit tables)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa

from sources.secrets import redact, scrub_name, scrub_table, scrub_text, scrub_value
from tests.conftest import SAMPLES
from warehouse.ingest import ingest_family
from warehouse.landing import HASH_CACHE, RACY_NS, land_inputs, read_manifest

JWT_SIGNATURE = "PLANTEDsig_Kxw-RJSMeKKF2QT4fwpMeJf36POk6yJV"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + JWT_SIGNATURE
URL = "postgres://admin:PLANTEDpw-secret@db.internal:5432/ledger"
NAME_TOKEN = "sk-PLANTEDname0123456789abcdef"


def test_jwt_is_hashed_whole_signature_included() -> None:
    text, n = scrub_value(f"call with {JWT} then", "note")
    assert n == 1 and "PLANTED" not in text and redact(JWT) in text
    assert scrub_value(JWT, "tag") == (redact(JWT), 1)
    assert "PLANTED" not in scrub_value(json.dumps({"auth": {"jwt": JWT}}), "labels")[0]


def test_url_password_is_hashed_and_the_rest_of_the_url_kept() -> None:
    text = scrub_text(f"connect {URL} now")
    assert text == f"connect postgres://admin:{redact('PLANTEDpw-secret')}@db.internal:5432/ledger now"
    assert scrub_text(text) == text  # already redacted: never hashed twice
    assert "PLANTED" not in scrub_value(URL, "dsn")[0]
    assert "PLANTED" not in scrub_value(json.dumps({"db": URL}), "labels")[0]
    assert scrub_text("https://example.com/a?b=1 and http://user@host/x") == "https://example.com/a?b=1 and http://user@host/x"


def test_whole_tables_lose_both_shapes() -> None:
    tbl = pa.table({"command": [f"run --db {URL}", "plain"], "labels": [json.dumps({"t": JWT}), None]})
    out, counts = scrub_table(tbl)
    assert counts == {"command": 1, "labels": 1}
    assert "PLANTED" not in json.dumps(out.to_pylist())


def test_names_lose_credentials_and_control_characters() -> None:
    assert scrub_name(f"usage-{NAME_TOKEN}.prom") == f"usage-{redact(NAME_TOKEN)}.prom"
    assert "PLANTED" not in scrub_name("/in/usage/export_password=PLANTEDpw.csv")
    assert scrub_name("a\tb\u202ec.csv") == "a?b?c.csv"


def test_a_token_in_a_file_name_is_recorded_nowhere(tmp_path: Path, monkeypatch) -> None:
    """Manifest, hash cache (its keys are paths) and the audit tables the publication copies
    (`source_files` is audit.file_loads) keep the name's token only as its hash."""
    monkeypatch.setattr("warehouse.landing.RACY_NS", -RACY_NS)  # remember even a file written just now
    inputs = tmp_path / "inputs"
    (inputs / "usage" / f"dir-{NAME_TOKEN}").mkdir(parents=True)
    shutil.copy(SAMPLES / "usage" / "datadog_dcgm_fixture_label_remap.prom",
                inputs / "usage" / f"dir-{NAME_TOKEN}" / f"dcgm-{NAME_TOKEN}.prom")
    home = tmp_path / "home"
    land_inputs(inputs, home / "landing", ("usage",))
    (row,) = read_manifest(home / "landing")
    assert row.original_name == f"dcgm-{redact(NAME_TOKEN)}.prom"
    cache = (home / HASH_CACHE).read_text()
    assert redact(NAME_TOKEN) in cache
    con = duckdb.connect(str(home / "ledger.duckdb"))
    try:
        ingest_family(con, "usage", home / "landing", "run-1")
        recorded = con.execute("select source_file, origin, message from audit.file_loads").fetchall()
    finally:
        con.close()
    assert recorded and recorded[0][0] == row.original_name
    for path in home.rglob("*"):
        if path.is_file() and not path.is_relative_to(home / "landing" / "usage"):
            assert b"PLANTED" not in path.read_bytes(), path
        assert "PLANTED" not in path.name
