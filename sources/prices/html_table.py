"""Generic neocloud pricing-page parser: an HTML <table> read through a configured column mapping.

Pages are described in config/fetch/price_html_pages.yaml (one entry per page layout): a `match`
regex that recognises the page, the header text of each column we need (`columns`), one header
per pricing category (`prices`), currency, price_unit and where the page states its own time
(`timestamp.meta` name or `timestamp.regex` with one group). Without a page timestamp,
observed_at is the fetch time. A page whose table or columns are gone raises UnreadableFile
naming the missing headers, so a layout change is loud, not a silent zero-row load.
Only the stdlib html.parser is used.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.prices._gpus import gpu_model_from_text
from sources.prices._rows import (
    OBSERVATIONS,
    check_currency,
    check_price,
    fetch_time,
    num_text,
    obs_table,
    parse_ts,
    term_json,
)
from sources.registry.yaml_lines import load_yaml

NAME = "html_pricing_table"
CONFIG = Path(__file__).resolve().parents[2] / "config" / "fetch" / "price_html_pages.yaml"
_NOT_OFFERED = {"", "-", "—", "–", "n/a", "na", "sold out", "contact us", "coming soon"}


class _Tables(HTMLParser):
    """Collects every table as rows of cell texts (with each row's source line), and <meta> tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[tuple[int, list[str]]]] = []
        self.meta: dict[str, str] = {}
        self._stack: list[list[tuple[int, list[str]]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._row_line = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "meta" and (a.get("name") or a.get("property")):
            self.meta[(a.get("name") or a.get("property") or "").lower()] = a.get("content") or ""
        elif tag == "table":
            self._stack.append([])
        elif tag == "tr" and self._stack:
            self._row, self._row_line = [], self.getpos()[0]
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._stack:
            self._stack[-1].append((self._row_line, self._row))
            self._row = None
        elif tag == "table" and self._stack:
            self.tables.append(self._stack.pop())

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@cache
def _pages(config: Path = CONFIG) -> tuple[dict[str, Any], ...]:
    doc = load_yaml(config) if config.exists() else {}  # aliases refused
    return tuple((doc or {}).get("pages") or [])


def _page_for(text: str, pages: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
    return next((p for p in pages if re.search(p["match"], text, re.IGNORECASE)), None)


def detect(path: Path, head: bytes) -> bool:
    """An HTML page with a table that one configured page layout recognises."""
    text = head_text(head)
    return "<table" in text.lower() and _page_for(text, _pages()) is not None


def _norm(header: str) -> str:
    return " ".join(header.lower().split())


def _find_table(
    tables: list[list[tuple[int, list[str]]]], needed: list[str]
) -> tuple[list[tuple[int, list[str]]], dict[str, int]] | None:
    for table in tables:
        for pos, (_, cells) in enumerate(table[:3]):  # header row is one of the first rows
            index = {_norm(c): i for i, c in enumerate(cells)}
            if all(_norm(h) in index for h in needed):
                return table[pos + 1 :], {h: index[_norm(h)] for h in needed}
    return None


def _observed(text: str, meta: dict[str, str], spec: dict[str, Any]) -> datetime | None:
    ts = spec.get("timestamp") or {}
    if ts.get("meta") and meta.get(ts["meta"].lower()):
        return parse_ts(meta[ts["meta"].lower()])
    if ts.get("regex"):
        m = re.search(ts["regex"], text)
        if m:
            return parse_ts(m.group(1))
    return None


def parse(
    path: Path, fetched_at: datetime | None = None, pages: tuple[dict[str, Any], ...] | None = None
) -> ParseOutput:
    """Configured HTML pricing page -> gpu_price_observations (one row per table row and price column)."""
    path = Path(path)
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise UnreadableFile(path, None, "page is empty")
    spec = _page_for(text, pages if pages is not None else _pages())
    if spec is None:
        raise UnreadableFile(
            path, None, "no configured page layout (config/fetch/price_html_pages.yaml) matches this page"
        )
    parser = _Tables()
    parser.feed(text)
    parser.close()
    columns: dict[str, str] = dict(spec.get("columns") or {})
    prices: dict[str, str] = dict(spec["prices"])
    needed = list(columns.values()) + list(prices.values())
    found = _find_table(parser.tables, needed)
    if found is None:
        if not parser.tables:
            raise UnreadableFile(
                path, None, f"page layout changed: no <table> found (expected columns {needed})"
            )
        seen = [c for t in parser.tables for _, cells in t[:1] for c in cells]
        missing = [h for h in needed if _norm(h) not in {_norm(c) for c in seen}]
        raise UnreadableFile(
            path, None, f"page layout changed: no table has the columns {missing} (headers seen: {seen})"
        )
    body, index = found
    observed = _observed(text, parser.meta, spec)
    warnings: list[str] = []
    basis = "source"
    if observed is None:
        observed, basis, note = fetch_time(path, fetched_at)
        if note:
            warnings.append(note)
    currency, bad_cur = check_currency(spec.get("currency", "USD"), None)
    if bad_cur:
        raise UnreadableFile(path, None, f"configured currency {spec.get('currency')!r} is not ISO 4217")
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    for line, cells in body:
        if len(cells) <= max(index.values()):
            continue  # section headings / spacer rows span fewer cells
        get = {field: cells[index[header]] for field, header in columns.items()}
        for category, header in prices.items():
            raw = cells[index[header]]
            if raw.strip().lower() in _NOT_OFFERED:
                continue
            number = re.sub(r"[^\d.\-]", "", raw.split("/")[0].replace(",", ""))
            price, bad = check_price(number or raw, line, header)
            if bad:
                rejects.append(Reject(line, bad.rule, f"{bad.message} (cell {raw!r})", header, raw))
                continue
            gpu_text = get.get("gpu_model") or get.get("sku")
            rows.append(
                {
                    "provider": spec["provider"],
                    "sku": get.get("sku"),
                    "sku_description": get.get("gpu_model"),
                    "region": get.get("region") or spec.get("region"),
                    "pricing_category": category,
                    "term_details": term_json(page=spec.get("name"), cell=raw),
                    "currency": currency,
                    "price": price,
                    "price_unit": spec.get("price_unit", "hour"),
                    "gpu_model": gpu_model_from_text(gpu_text),
                    "gpu_count": num_text(get.get("gpu_count")),
                    "observed_at": observed,
                    "observed_at_basis": basis,
                    "source": spec.get("url") or path.name,
                    "source_format": NAME,
                    "_source_line": line,
                }
            )
    if not rows and not rejects:
        raise UnreadableFile(path, None, "pricing table has a header but no priced rows")
    return ParseOutput(tables={OBSERVATIONS: obs_table(rows, rejects)}, rejects=rejects, warnings=warnings)


FORMATS = [SourceFormat(NAME, "prices", detect, parse, "Neocloud HTML pricing table (configured mapping)")]
