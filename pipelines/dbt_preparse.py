"""dbt's saved parse, decoded by a warm dbt process before the command that needs it comes.

A dbt command that may reuse its project's parse first decodes `<target>/partial_parse.msgpack` (~3 MB
here) into a `Manifest` (cProfile of a one-model build on a sample home: 0.59 of the command's ~2 s in
`read_manifest_for_partial_parse`, 0.42 of it mashumaro's decoder). A warm process (the refresh's dbt
worker, the test session's dbt server) has time to spare while it waits, so `predecode` decodes the file
then. The command still reads the file and makes every check dbt makes (vars, profile, environment and
file hashes: `is_partial_parsable`); only when the bytes it read equal the bytes decoded earlier does it
get the decoded manifest instead of decoding them again. It gets it once: a second command in the same
process decodes for itself (the first one changed the objects), while each child the dbt server forks
afterwards takes its own copy. A one-model build through the test session's dbt server: 0.87-1.06 CPU s a
command against 1.26-1.38 without (averages of six commands, four pairs of servers, 2026-12-07).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_DECODED: dict[str, Any] = {}  # {"data": the file's bytes, "manifest": the Manifest decoded from them}
_HANDED_OUT: list[bool] = []  # one entry once a command of this process got the decoded manifest


def handed_out() -> bool:
    """Whether a dbt command of this process got the manifest `predecode` decoded."""
    return bool(_HANDED_OUT)


def predecode(path: Path) -> bool:
    """Decode the partial-parse file at `path` now, for the next dbt command of this process (or of each
    child forked after this) that reads the same bytes; False when the file is missing or not decodable
    (the command then does what dbt does)."""
    from dbt.contracts.graph.manifest import Manifest
    from dbt.parser.manifest import extended_mashumuro_decoder

    try:
        data = path.read_bytes()
        manifest = Manifest.from_msgpack(data, decoder=extended_mashumuro_decoder)
    except Exception:  # noqa: BLE001 - dbt decodes it again in the command and reports what is wrong
        return False
    # Decoding gave it a multiprocessing lock, a named semaphore that every child forked from here would
    # share (one killed while holding it would block the others): dropped, each command gets its own.
    manifest._lock = None
    _reuse_decoded()
    _DECODED.update(data=data, manifest=manifest)
    return True


def _reuse_decoded() -> None:
    """Make `Manifest.from_msgpack` hand out the predecoded manifest for the same bytes (once per process)."""
    from dbt.contracts.graph.manifest import Manifest
    from dbt.parser.manifest import extended_mashumuro_decoder

    if getattr(Manifest.from_msgpack, "predecoded", False):
        return
    decode = Manifest.__dict__["from_msgpack"].__func__  # mashumaro's generated decoder for Manifest

    def from_msgpack(cls: type, data: bytes, *args: Any, **kwargs: Any) -> Any:
        if (cls is Manifest and not args and kwargs.get("decoder") is extended_mashumuro_decoder
                and _DECODED and data == _DECODED["data"]):
            manifest = _DECODED.pop("manifest")
            _DECODED.clear()
            _HANDED_OUT.append(True)
            return Manifest.__post_deserialize__(manifest)  # what decoding ends with: a lock of its own
        return decode(cls, data, *args, **kwargs)

    from_msgpack.predecoded = True  # type: ignore[attr-defined]
    Manifest.from_msgpack = classmethod(from_msgpack)  # type: ignore[method-assign, assignment]
