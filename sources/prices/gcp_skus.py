"""GCP Cloud Billing Catalog API `services/<id>/skus` response -> price observations.

One row per (SKU, service region, pricing info, tier). price = units + nanos / 1e9, computed
exactly with Decimal. Every SKU is kept (GPU, CPU, RAM); GPU SKUs (resourceGroup GPU) get
price_unit gpu-hour, gpu_count 1 and the GPU model named in the description. observed_at is
the pricing info's effectiveTime, else the fetch time (see _rows.fetch_time).
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
    parse_ts,
    term_json,
)

NAME = "gcp_cloudbilling_skus"
_USAGE = {
    "ondemand": "on-demand",
    "preemptible": "spot",
    "commit1yr": "committed-1y",
    "commit3yr": "committed-3y",
}
_UNITS = {"h": "hour", "giby.h": "gib-hour", "giby.mo": "gib-month", "gibi.h": "gib-hour"}


def detect(path: Path, head: bytes) -> bool:
    """A Cloud Billing SKU list has `skus` with `skuId` and `pricingInfo`."""
    text = head_text(head)
    return bool(re.search(r'"skus"\s*:', text) and '"skuId"' in text and '"pricingInfo"' in text)


def _unit(usage_unit: str, group: str) -> str:
    if group == "GPU" and usage_unit == "h":
        return "gpu-hour"
    if group == "CPU" and usage_unit == "h":
        return "vcpu-hour"
    return _UNITS.get(usage_unit.lower(), usage_unit.lower())


def parse(path: Path, fetched_at: datetime | None = None) -> ParseOutput:
    """SKU list JSON -> gpu_price_observations."""
    path = Path(path)
    doc, warnings = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("skus"), list):
        raise UnreadableFile(path, None, "not a Cloud Billing SKU list: 'skus' array missing")
    fallback, fallback_basis, fallback_note = fetch_time(path, fetched_at)
    used_fallback = 0
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    for index, sku in enumerate(doc["skus"], start=1):
        cat = sku.get("category") or {}
        group = str(cat.get("resourceGroup") or "")
        description = sku.get("description")
        gpu = gpu_model_from_text(description) if group == "GPU" else None
        regions = sku.get("serviceRegions") or [None]
        ref = sku.get("name") or sku.get("skuId")  # the SKU's resource name: its source URL (none: missing_source)
        for info in sku.get("pricingInfo") or []:
            expr = info.get("pricingExpression") or {}
            observed, basis = parse_ts(info.get("effectiveTime")), "source"
            if observed is None:
                observed, basis, used_fallback = fallback, fallback_basis, used_fallback + 1
            for tier in expr.get("tieredRates") or []:
                unit_price = tier.get("unitPrice") or {}
                try:
                    value = Decimal(str(unit_price.get("units") or "0")) + Decimal(
                        int(unit_price.get("nanos") or 0)
                    ) / Decimal(10**9)
                except (ArithmeticError, ValueError):
                    rejects.append(
                        Reject(
                            index,
                            "non_numeric",
                            f"unitPrice {unit_price} is not a number",
                            "unitPrice",
                            str(unit_price),
                        )
                    )
                    continue
                if (
                    value == 0
                    and Decimal(str(tier.get("startUsageAmount") or 0)) == 0
                    and len(expr.get("tieredRates")) > 1
                ):
                    continue  # free first tier of a tiered SKU: an allowance, not a price
                price, bad = check_price(value, index, "unitPrice")
                currency, bad_cur = check_currency(unit_price.get("currencyCode"), index, "currencyCode")
                if bad or bad_cur:
                    rejects.append(bad or bad_cur)
                    continue
                for region in regions:
                    rows.append(
                        {
                            "provider": "gcp",
                            "sku": sku.get("skuId"),
                            "sku_description": description,
                            "region": region,
                            "pricing_category": _USAGE.get(
                                str(cat.get("usageType") or "").lower(),
                                str(cat.get("usageType") or "").lower() or None,
                            ),
                            "term_details": term_json(
                                usage_type=cat.get("usageType"),
                                resource_family=cat.get("resourceFamily"),
                                resource_group=group,
                                service=cat.get("serviceDisplayName"),
                                usage_unit=expr.get("usageUnit"),
                                start_usage_amount=str(tier.get("startUsageAmount")),
                                currency_conversion_rate=str(info.get("currencyConversionRate")),
                                geo_type=(sku.get("geoTaxonomy") or {}).get("type"),
                            ),
                            "currency": currency,
                            "price": price,
                            "price_unit": _unit(str(expr.get("usageUnit") or ""), group),
                            "gpu_model": gpu,
                            "gpu_count": "1" if group == "GPU" else None,
                            "observed_at": observed,
                            "observed_at_basis": basis,
                            "source": f"https://cloudbilling.googleapis.com/v1/{ref}" if ref else None,
                            "source_format": NAME,
                            "_source_line": index,
                        }
                    )
    if used_fallback and fallback_note:
        warnings.append(f"{used_fallback} pricing infos without effectiveTime; " + fallback_note)
    elif used_fallback:
        warnings.append(f"{used_fallback} pricing infos without effectiveTime; observed_at = fetch time")
    if doc.get("nextPageToken"):
        warnings.append(f"{path.name}: nextPageToken present: this file is one page of a longer SKU list")
    return ParseOutput(tables={OBSERVATIONS: obs_table(rows, rejects)}, rejects=rejects, warnings=warnings)


FORMATS = [SourceFormat(NAME, "prices", detect, parse, "GCP Cloud Billing Catalog API SKU list JSON")]
