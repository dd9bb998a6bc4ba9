"""A warm dbt process decodes the saved parse before its command comes (pipelines/dbt_preparse.py): the
command gets that manifest only for the very bytes decoded, and only once; and a real dbt command reads it
through that path (were dbt to stop calling `Manifest.from_msgpack`, the saving would be gone unseen)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from pipelines.dbt_parse import MANIFEST, PARTIAL_PARSE
from pipelines.dbt_preparse import _DECODED, predecode
from warehouse.home import DBT_DIR


def test_the_decoded_parse_goes_to_the_same_bytes_once(tmp_path: Path) -> None:
    from dbt.contracts.graph.manifest import Manifest
    from dbt.parser.manifest import extended_mashumaro_encoder, extended_mashumuro_decoder

    saved = MANIFEST.parent / PARTIAL_PARSE
    data = saved.read_bytes()
    assert predecode(saved)
    decoded = _DECODED["manifest"]
    first = Manifest.from_msgpack(data, decoder=extended_mashumuro_decoder)
    assert first is decoded  # the same bytes: handed out ...
    assert first._lock is not None  # with a lock of its own (predecode keeps none: children would share it)
    assert not _DECODED  # ... once
    again = Manifest.from_msgpack(data, decoder=extended_mashumuro_decoder)
    assert again is not decoded and again.metadata.project_name == decoded.metadata.project_name

    # Other bytes (the same parse under another project name): decoded from them; the decoded one is kept.
    assert predecode(saved)
    again.metadata.project_name = "another_project"
    changed = again.to_msgpack(encoder=extended_mashumaro_encoder)
    assert changed != data
    read = Manifest.from_msgpack(changed, decoder=extended_mashumuro_decoder)
    assert read is not _DECODED["manifest"] and read.metadata.project_name == "another_project"
    assert _DECODED  # still there for the bytes it was decoded from
    _DECODED.clear()

    assert not predecode(tmp_path / "missing.msgpack")  # nothing to decode: dbt does what it does
    (tmp_path / "bad.msgpack").write_bytes(b"not msgpack")
    assert not predecode(tmp_path / "bad.msgpack")
    # Each Manifest holds a multiprocessing lock (a named semaphore): freed now, none is left at exit.
    del decoded, first, again, read
    gc.collect()


_LS = """
import json, sys
from pathlib import Path
from pipelines.dbt_entry import run_dbt
from pipelines.dbt_preparse import _DECODED, predecode
target = Path(sys.argv[1])
assert predecode(target / "partial_parse.msgpack")
code = run_dbt(["ls", "--project-dir", sys.argv[2], "--profiles-dir", sys.argv[2], "--target-path", str(target),
                "--vars", sys.argv[3], "--resource-type", "model", "--output", "name", "--quiet"])
print(json.dumps({"code": code, "consumed": not _DECODED}), file=sys.stderr)
"""


def test_a_dbt_command_takes_the_decoded_parse(tmp_path: Path) -> None:
    from pipelines.dbt_entry import DBT_LEDGER_VARS
    from pipelines.dbt_parse import load_manifest

    target = tmp_path / "target"
    target.mkdir()
    (target / PARTIAL_PARSE).write_bytes((MANIFEST.parent / PARTIAL_PARSE).read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "GPU_LEDGER_DBT_SERVER"}  # dbt in the child itself
    done = subprocess.run([sys.executable, "-c", _LS, str(target), str(DBT_DIR),
                           json.dumps(DBT_LEDGER_VARS, sort_keys=True)],
                          cwd=tmp_path, env={**env, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
                          capture_output=True, text=True, timeout=300, check=False)
    result = json.loads(done.stderr.strip().splitlines()[-1])
    assert result == {"code": 0, "consumed": True}, done.stderr[-2000:]
    models = sorted(n["name"] for n in load_manifest()["nodes"].values() if n["resource_type"] == "model")
    assert sorted(done.stdout.split()) == models  # the command ran on it, whole
