"""Oracle Cloud public price list (`/products` API, `items[]`) -> price observations.

One row per (part number, currency, price/tier). Every part is kept; 'GPU Per Hour' parts get
price_unit gpu-hour and gpu_count 1. Tiers keep rangeMin/rangeMax in term_details
(999999999999999 means no upper bound -> null); a 0 price in a tiered part is the free
allowance and is skipped (counted in a warning). The list has no timestamp, so observed_at is
the fetch time. The file's leading-comma layout is valid JSON and needs no repair.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.prices._gpus import gpu_model_from_text
from sources.prices._rows import (
    OBSERVATIONS,
    check_currency,
    check_price,
    fetch_time,
    load_json,
    obs_table,
    term_json,
)

NAME = "oci_pricelist"
_NO_MAX = Decimal(999999999999999)
_UNITS = {
    "gpu per hour": "gpu-hour",
    "instance per hour": "hour",
    "node per hour": "node-hour",
    "ocpu per hour": "ocpu-hour",
    "ecpu per hour": "ecpu-hour",
    "gigabyte per hour": "gb-hour",
    "gigabyte storage capacity per month": "gb-month",
    "terabyte storage capacity per month": "tb-month",
}
_MODELS = {"pay_as_you_go": "on-demand", "monthly_commit": "committed"}


def detect(path: Path, head: bytes) -> bool:
    """OCI price list items carry partNumber and currencyCodeLocalizations."""
    text = head_text(head)
    return '"partNumber"' in text and '"currencyCodeLocalizations"' in text


def _unit(metric: str) -> str:
    key = " ".join(metric.lower().split())
    return _UNITS.get(key, re.sub(r"[^a-z0-9]+", "-", key).strip("-"))


def _gpu(display: str) -> str | None:
    # OCI's "A100 - v2" shapes (BM.GPU.A100-v2.8) are the 80GB part; the generic rule says 40GB.
    if re.search(r"A100\W*V2", display.upper()):
        return "A100-80GB"
    return gpu_model_from_text(display)


def parse(path: Path, fetched_at: datetime | None = None) -> ParseOutput:
    """OCI price list JSON -> gpu_price_observations."""
    path = Path(path)
    doc, warnings = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        raise UnreadableFile(path, None, "not an OCI price list: 'items' array missing")
    observed, basis, note = fetch_time(path, fetched_at)
    if note:
        warnings.append(note)
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    free_tiers = 0
    for index, item in enumerate(doc["items"], start=1):
        display = " ".join(str(item.get("displayName") or "").split())  # source has double spaces
        metric = str(item.get("metricName") or "")
        unit = _unit(metric)
        for loc in item.get("currencyCodeLocalizations") or []:
            for p in loc.get("prices") or []:
                tiered = "rangeMin" in p or "rangeMax" in p
                if tiered and p.get("value") is not None and Decimal(str(p["value"])) == 0:
                    free_tiers += 1
                    continue
                price, bad = check_price(p.get("value"), index, "value")
                currency, bad_cur = check_currency(loc.get("currencyCode"), index, "currencyCode")
                if bad or bad_cur:
                    rejects.append(bad or bad_cur)
                    continue
                range_max = p.get("rangeMax")
                if range_max is not None and Decimal(str(range_max)) >= _NO_MAX:
                    range_max = None
                model = str(p.get("model") or "")
                rows.append(
                    {
                        "provider": "oci",
                        "sku": item.get("partNumber"),
                        "sku_description": display,
                        "region": None,
                        "pricing_category": _MODELS.get(model.lower(), model.lower() or None),
                        "term_details": term_json(
                            price_model=model,
                            metric=metric,
                            service_category=item.get("serviceCategory"),
                            range_min=None if p.get("rangeMin") is None else str(p["rangeMin"]),
                            range_max=None if range_max is None else str(range_max),
                            range_unit=p.get("rangeUnit"),
                        ),
                        "currency": currency,
                        "price": price,
                        "price_unit": unit,
                        "gpu_model": _gpu(display) if unit == "gpu-hour" else None,
                        "gpu_count": "1" if unit == "gpu-hour" else None,
                        "observed_at": observed,
                        "observed_at_basis": basis,
                        "source": "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/",
                        "source_format": NAME,
                        "_source_line": index,
                    }
                )
    if free_tiers:
        warnings.append(f"{path.name}: {free_tiers} free (0-priced) tier(s) skipped")
    return ParseOutput(tables={OBSERVATIONS: obs_table(rows, rejects)}, rejects=rejects, warnings=warnings)


FORMATS = [SourceFormat(NAME, "prices", detect, parse, "Oracle Cloud price list API JSON")]
