"""A warm dbt process decodes the saved parse before its command comes (pipelines/dbt_preparse.py): the
command gets that manifest only for the very bytes decoded, and only once. That a real dbt command reads it
through this path (were dbt to stop calling `Manifest.from_msgpack`, the saving would be gone unseen) is
tests/pipeline/test_dbt_warm.py's: a command through the refresh's worker logs that it used it."""

from __future__ import annotations

import gc
from pathlib import Path

from pipelines.dbt_parse import project_parse
from pipelines.dbt_preparse import _DECODED, predecode


def test_the_decoded_parse_goes_to_the_same_bytes_once(tmp_path: Path) -> None:
    from dbt.contracts.graph.manifest import Manifest
    from dbt.parser.manifest import extended_mashumaro_encoder, extended_mashumuro_decoder

    saved = project_parse()
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
