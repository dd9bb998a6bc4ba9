"""A small reader for the Prometheus text exposition format (and our scrape-series convention).

Supported beyond a single scrape:
- the optional trailing timestamp of a sample (integer milliseconds since the epoch);
- several scrapes concatenated in one file, each preceded by a `# scrape_time <ISO 8601>`
  comment line; samples without their own timestamp take the latest `scrape_time` (UTC when
  the ISO text has no offset). Before any `scrape_time` line a sample has no time (None).
Non-standard comments (`# NOTE ...`), `# HELP`/`# TYPE` and blank lines are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sources.common import UnreadableFile

_SAMPLE = re.compile(
    r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?[ \t]+(?P<value>\S+)(?:[ \t]+(?P<ts>-?\d+))?[ \t]*$"
)
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_SCRAPE_TIME = re.compile(r"^#\s*scrape_time\s+(\S+)\s*$")


@dataclass
class Sample:
    """One parsed sample line."""

    line: int
    name: str
    labels: dict[str, str]
    value: float
    ts: datetime | None


@dataclass
class ReadStats:
    """Lines the reader could not use, for warnings."""

    bad_lines: list[int] = field(default_factory=list)
    bad_scrape_times: list[int] = field(default_factory=list)


def parse_iso_utc(text: str) -> datetime:
    """ISO 8601 text to a naive UTC datetime (text without offset is taken as UTC)."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    return dt


def _unescape(value: str) -> str:
    return value.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def read_samples(path: Path, stats: ReadStats, wanted: re.Pattern[str] | None = None) -> Iterator[Sample]:
    """Yield every sample of the file; `wanted` (a name regex) skips other metrics cheaply."""
    current_ts: datetime | None = None
    try:
        fh = open(path, encoding="utf-8-sig", errors="strict")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise UnreadableFile(path, None, f"cannot open: {exc}") from exc
    with fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                line = raw.strip()
                if not line:
                    continue
                if line.startswith("#"):
                    m = _SCRAPE_TIME.match(line)
                    if m:
                        try:
                            current_ts = parse_iso_utc(m.group(1))
                        except ValueError:
                            stats.bad_scrape_times.append(lineno)
                    continue
                m = _SAMPLE.match(line)
                if not m:
                    stats.bad_lines.append(lineno)
                    continue
                name = m.group("name")
                if wanted is not None and not wanted.match(name):
                    continue
                try:
                    value = float(m.group("value"))
                except ValueError:
                    stats.bad_lines.append(lineno)
                    continue
                labels = {k: _unescape(v) for k, v in _LABEL.findall(m.group("labels") or "")}
                ts = current_ts
                if m.group("ts") is not None:
                    ts = datetime.fromtimestamp(int(m.group("ts")) / 1000, tz=UTC).replace(tzinfo=None)
                yield Sample(lineno, name, labels, value, ts)
        except UnicodeDecodeError as exc:
            raise UnreadableFile(path, None, f"not UTF-8 text: {exc}") from exc
