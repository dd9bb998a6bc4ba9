"""Helpers shared by the benchmark parsers: JSON loading, number coercion, ids, name parsing."""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sources.benchmarks import _hardware
from sources.common import Reject, UnreadableFile

_TP_RE = re.compile(r"(?:^|[_\-/.])tp(\d+)(?=[_\-.]|$)", re.I)
_PP_RE = re.compile(r"(?:^|[_\-/.])pp(\d+)(?=[_\-.]|$)", re.I)
_QPS_RE = re.compile(r"qps_([0-9.]+|inf)(?=[_\-.]|$)", re.I)


def load_json(path: Path) -> Any:
    """Parse a whole JSON file; a truncated or non-JSON file raises UnreadableFile with its line."""
    raw = Path(path).read_bytes()
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, None, f"not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise UnreadableFile(path, exc.lineno, f"invalid or truncated JSON: {exc.msg} (column {exc.colno})") from exc


def content_id(prefix: str, *parts: Any) -> str:
    """Stable id: `prefix-` + 16 hex chars of sha256 over the JSON of `parts`."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return f"{prefix}-{hashlib.sha256(blob).hexdigest()[:16]}"


def file_sha(path: Path) -> str:
    """sha256 of a file's bytes (hex)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class Coercer:
    """Turns loosely typed JSON values into floats/ints, recording rejects and warnings.

    Numbers given as strings (`"550"`, `"450.3"`) are accepted with one warning per file;
    strings that are not numbers become a Reject for that value and a NULL, the row is kept.
    """

    def __init__(self, line: int) -> None:
        self.line = line
        self.rejects: list[Reject] = []
        self.string_numbers: set[str] = set()

    def num(self, value: Any, column: str) -> float | None:
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return None if isinstance(value, float) and math.isnan(value) else float(value)
        if isinstance(value, str):
            text = value.strip()
            if text == "":
                return None
            try:
                out = float(text)
            except ValueError:
                self.rejects.append(Reject(self.line, "non_numeric", f"{column} is not a number", column, value[:80]))
                return None
            self.string_numbers.add(column)
            return out
        self.rejects.append(Reject(self.line, "non_numeric", f"{column} has type {type(value).__name__}", column, str(value)[:80]))
        return None

    def int(self, value: Any, column: str) -> int | None:
        out = self.num(value, column)
        return None if out is None or math.isinf(out) else int(round(out))

    def warnings(self) -> list[str]:
        if not self.string_numbers:
            return []
        return [f"line {self.line}: numbers given as strings were converted: {', '.join(sorted(self.string_numbers))}"]


def rate(value: Any) -> tuple[float | None, str | None]:
    """Request rate as (number or None for infinity, label as written)."""
    if value is None:
        return None, None
    if isinstance(value, str):
        label = value.strip()
        if label.lower() in ("inf", "infinity"):
            return None, "inf"
        try:
            return float(label), label
        except ValueError:
            return None, label
    if isinstance(value, (int, float)):
        if math.isinf(value):
            return None, "inf"
        return float(value), f"{value:g}"
    return None, str(value)


def parallelism_from_name(text: str) -> tuple[int | None, int | None]:
    """(tensor_parallel, pipeline_parallel) from a name like `..._tp8_pp2_...`."""
    tp = _TP_RE.search(text)
    pp = _PP_RE.search(text)
    return (int(tp.group(1)) if tp else None, int(pp.group(1)) if pp else None)


def qps_from_name(text: str) -> str | None:
    """Request-rate label from `..._qps_16` / `qps_inf` in a file or test name."""
    m = _QPS_RE.search(text)
    return m.group(1) if m else None


def parse_gpu_type(text: str | None) -> dict[str, Any]:
    """Split free-text hardware like `ib-Standard_ND96asr_v4 x 2` into sku, count, GPUs and network.

    The instance catalogue resolves the name (sources/benchmarks/_hardware.py); `gpu_count` is
    whole GPUs or None, `unknown` the name as written when the catalogue does not know it.
    """
    hw = _hardware.hardware_from_text(text)
    return {**hw, "gpu_count": _hardware.whole_gpus(hw["gpu_count"])}


def epoch_to_utc(value: Any) -> datetime | None:
    """Epoch seconds (int/float) -> naive UTC datetime."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=timezone.utc).replace(tzinfo=None)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def ms(seconds: float | None) -> float | None:
    """Seconds -> milliseconds, None-safe."""
    return None if seconds is None else seconds * 1000.0


def metadata_json(extra: dict[str, Any]) -> str | None:
    """JSON text of leftover keys (None when there are none)."""
    if not extra:
        return None
    return json.dumps(extra, sort_keys=True, default=str)


def head_json_keys(head: bytes) -> set[str]:
    """Quoted names followed by a colon in the first bytes: cheap key sniffing without parsing."""
    text = head.decode("utf-8-sig", errors="replace")
    return set(re.findall(r'"([^"\\]{1,80})"\s*:', text))


def head_first_char(head: bytes) -> str:
    """First non-blank character of the file (`{` object, `[` array)."""
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    return text[:1]
