"""Azure Retail Prices API page (https://prices.azure.com/api/retail/prices) -> price observations.

One row per item. pricing_category: type Reservation -> reserved-1y / reserved-3y from
reservationTerm (the price is then the whole term's cost: price_unit 'term'); meterName or
skuName containing 'Spot' -> spot, 'Low Priority' -> low-priority; DevTestConsumption ->
devtest; else on-demand. A unitOfMeasure like '100 Hours' is divided down to one hour.
observed_at = effectiveStartDate. NextPageLink is followed by the fetcher; a page that still
has one is noted in a warning.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
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

NAME = "azure_retail_prices"
_UOM = re.compile(r"^\s*(\d+)\s*(?:/\s*)?(hour|hours|month|months|day|days|gb/month|gb)\s*$", re.IGNORECASE)


def detect(path: Path, head: bytes) -> bool:
    """A Retail Prices page has `Items` whose entries carry meterId and armRegionName."""
    text = head_text(head)
    return bool(re.search(r'"Items"\s*:', text) and '"meterId"' in text and '"armRegionName"' in text)


def _category(item: dict[str, Any]) -> str:
    kind = str(item.get("type") or "").lower()
    if kind == "reservation":
        term = str(item.get("reservationTerm") or "").lower()
        return (
            "reserved-1y" if term.startswith("1") else "reserved-3y" if term.startswith("3") else "reserved"
        )
    names = f"{item.get('meterName') or ''} {item.get('skuName') or ''}".lower()
    if "spot" in names:
        return "spot"
    if "low priority" in names:
        return "low-priority"
    if kind == "devtestconsumption":
        return "devtest"
    return "on-demand"


def _unit(uom: str, reserved: bool) -> tuple[str | None, Decimal]:
    """(price_unit, divisor) for a unitOfMeasure such as '1 Hour' or '100 Hours'."""
    if reserved:
        return "term", Decimal(1)  # reservation retailPrice is the price of the whole term
    m = _UOM.match(uom)
    if not m:
        return (uom.strip().lower() or None), Decimal(1)
    unit = m.group(2).lower().rstrip("s")
    unit = {"hour": "hour", "month": "month", "day": "day", "gb/month": "gb-month", "gb": "gb"}.get(
        unit, unit
    )
    return unit, Decimal(m.group(1))


def parse(path: Path, fetched_at: datetime | None = None) -> ParseOutput:
    """Retail Prices API JSON page -> gpu_price_observations."""
    path = Path(path)
    doc, warnings = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("Items"), list):
        raise UnreadableFile(path, None, "not an Azure Retail Prices page: 'Items' array missing")
    fallback, fallback_basis, note = fetch_time(path, fetched_at)
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    for index, item in enumerate(doc["Items"], start=1):
        category = _category(item)
        unit, divisor = _unit(str(item.get("unitOfMeasure") or ""), category.startswith("reserved"))
        raw = item.get("retailPrice", item.get("unitPrice"))
        price, bad = check_price(raw, index, "retailPrice")
        currency, bad_cur = check_currency(item.get("currencyCode"), index, "currencyCode")
        if bad or bad_cur:
            rejects.append(bad or bad_cur)
            continue
        if divisor != 1:
            price = format(Decimal(price) / divisor, "f")
        observed, basis = parse_ts(item.get("effectiveStartDate")), "source"
        if observed is None:
            observed, basis = fallback, fallback_basis
            if note and note not in warnings:
                warnings.append(note)
        rows.append(
            {
                "provider": "azure",
                "sku": item.get("armSkuName") or item.get("skuName"),
                "sku_description": " / ".join(
                    str(x) for x in (item.get("productName"), item.get("skuName"), item.get("meterName")) if x
                ),
                "region": item.get("armRegionName"),
                "pricing_category": category,
                "term_details": term_json(
                    type=item.get("type"),
                    reservation_term=item.get("reservationTerm"),
                    unit_of_measure=item.get("unitOfMeasure"),
                    unit_price=None if item.get("unitPrice") is None else str(item["unitPrice"]),
                    tier_minimum_units=None
                    if item.get("tierMinimumUnits") is None
                    else str(item["tierMinimumUnits"]),
                    meter_id=item.get("meterId"),
                    product_id=item.get("productId"),
                    sku_id=item.get("skuId"),
                    service_name=item.get("serviceName"),
                    service_family=item.get("serviceFamily"),
                    location=item.get("location"),
                    is_primary_meter_region=item.get("isPrimaryMeterRegion"),
                    operating_system="Windows"
                    if "windows" in str(item.get("productName") or "").lower()
                    else "Linux",
                ),
                "currency": currency,
                "price": price,
                "price_unit": unit,
                "gpu_model": None,  # Azure encodes the GPU in the ARM SKU; dbt/seeds/instance_gpu_map.csv maps it
                "gpu_count": None,
                "observed_at": observed,
                "observed_at_basis": basis,
                "source": "https://prices.azure.com/api/retail/prices",
                "source_format": NAME,
                "_source_line": index,
            }
        )
    if doc.get("NextPageLink"):
        warnings.append(
            f"{path.name}: NextPageLink present: one page of a longer result ({doc['NextPageLink']})"
        )
    return ParseOutput(tables={OBSERVATIONS: obs_table(rows, rejects)}, rejects=rejects, warnings=warnings)


FORMATS = [SourceFormat(NAME, "prices", detect, parse, "Azure Retail Prices API JSON page")]
