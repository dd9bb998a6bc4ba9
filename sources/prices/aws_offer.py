"""AWS Price List API offer file (`offers/v1.0/aws/AmazonEC2/.../index.json`) -> price observations.

One row per (product, term, price dimension, currency). Every priced product is kept (GPU and
CPU instances, storage): the table is the raw catalog and dbt filters by SKU; `gpu_count` is
filled from the product's `gpu` attribute. Decisions (see docs/sources/prices.md):
- offer excerpts with a trailing comma are parsed leniently, with a warning;
- $0.00 dimensions (capacity-block / reservation duplicates) are skipped with a warning;
- a term whose termAttributes carry LeaseContractLength is reserved-1y/3y whatever its group;
- observed_at is the offer's publicationDate; the term's effectiveDate goes into term_details.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.prices._rows import (
    OBSERVATIONS,
    check_currency,
    check_price,
    load_json,
    num_text,
    obs_table,
    parse_ts,
    term_json,
)

NAME = "aws_pricelist_offer"
_UNITS = {"hrs": "hour", "quantity": "upfront", "gb-mo": "gb-month"}
_MARKET = {"ondemand": "on-demand", "capacityblock": "capacity-block", "spot": "spot"}


def detect(path: Path, head: bytes) -> bool:
    """An AWS offer file names formatVersion and offerCode near its top."""
    text = head_text(head)
    return bool(re.search(r'"formatVersion"\s*:', text) and re.search(r'"offerCode"\s*:', text))


def _category(term_group: str, attrs: dict[str, Any], term_attrs: dict[str, Any]) -> str:
    lease = str(term_attrs.get("LeaseContractLength") or "").lower()
    if lease.startswith("1"):
        return "reserved-1y"
    if lease.startswith("3"):
        return "reserved-3y"
    if term_group.lower() == "reserved":
        return "reserved"
    market = str(attrs.get("marketoption") or "OnDemand").lower()
    return _MARKET.get(market, market)


def parse(path: Path) -> ParseOutput:
    """Offer JSON -> gpu_price_observations (one row per priced dimension and currency)."""
    path = Path(path)
    doc, warnings = load_json(path, lenient=True)
    if not isinstance(doc, dict) or "products" not in doc or "terms" not in doc:
        raise UnreadableFile(path, None, "not an AWS offer file: 'products' or 'terms' missing")
    published = parse_ts(doc.get("publicationDate"))
    if published is None:
        raise UnreadableFile(path, None, f"publicationDate {doc.get('publicationDate')!r} is not a timestamp")
    products = doc.get("products") or {}
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    zero = 0
    index = 0
    for group, by_sku in (doc.get("terms") or {}).items():
        for product_sku, offers in (by_sku or {}).items():
            product = products.get(product_sku) or {}
            attrs = product.get("attributes") or {}
            for offer in (offers or {}).values():
                term_attrs = offer.get("termAttributes") or {}
                for dim in (offer.get("priceDimensions") or {}).values():
                    for cur, raw in (dim.get("pricePerUnit") or {}).items():
                        index += 1
                        if isinstance(raw, (str, Decimal, int)) and _is_zero(raw):
                            zero += 1
                            continue
                        price, bad = check_price(raw, index)
                        currency, bad_cur = check_currency(cur, index)
                        if bad or bad_cur:
                            rejects.append(bad or bad_cur)
                            continue
                        unit = str(dim.get("unit") or "")
                        rows.append(
                            {
                                "provider": "aws",
                                "sku": attrs.get("instanceType")
                                or attrs.get("volumeApiName")
                                or attrs.get("usagetype")
                                or product_sku,
                                "sku_description": dim.get("description"),
                                "region": attrs.get("regionCode"),
                                "pricing_category": _category(group, attrs, term_attrs),
                                "term_details": term_json(
                                    aws_sku=product_sku,
                                    offer_term_code=offer.get("offerTermCode"),
                                    rate_code=dim.get("rateCode"),
                                    effective_date=offer.get("effectiveDate"),
                                    product_family=product.get("productFamily"),
                                    operating_system=attrs.get("operatingSystem"),
                                    tenancy=attrs.get("tenancy"),
                                    license_model=attrs.get("licenseModel"),
                                    capacity_status=attrs.get("capacitystatus"),
                                    operation=attrs.get("operation"),
                                    lease_contract_length=term_attrs.get("LeaseContractLength"),
                                    purchase_option=term_attrs.get("PurchaseOption"),
                                    offering_class=term_attrs.get("OfferingClass"),
                                    begin_range=dim.get("beginRange"),
                                    end_range=dim.get("endRange"),
                                    offer_version=doc.get("version"),
                                ),
                                "currency": currency,
                                "price": price,
                                "price_unit": _UNITS.get(unit.lower(), unit.lower() or None),
                                "gpu_model": None,
                                "gpu_count": num_text(attrs.get("gpu")),
                                "observed_at": published,
                                "source": f"aws-pricelist:{doc.get('offerCode')}/{doc.get('version')}",
                                "source_format": NAME,
                                "_source_line": index,
                            }
                        )
    if zero:
        warnings.append(
            f"{path.name}: {zero} price dimension(s) of 0.00 skipped (capacity-block/reservation duplicates)"
        )
    if index == 0:
        raise UnreadableFile(path, None, "offer file has no price dimensions")
    return ParseOutput(tables={OBSERVATIONS: obs_table(rows, rejects)}, rejects=rejects, warnings=warnings)


def _is_zero(raw: Any) -> bool:
    try:
        return Decimal(str(raw).strip()) == 0
    except ArithmeticError:
        return False


FORMATS = [SourceFormat(NAME, "prices", detect, parse, "AWS Price List API offer JSON (EC2)")]
