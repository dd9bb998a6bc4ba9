"""Neocloud provider API responses as captured by gpuhunt (verda/DataCrunch, Vultr, DigitalOcean,
JarvisLabs) -> price observations.

Accepts the gpuhunt fixture bundle (`{provider: {name: response}}`) or one raw response; each
response is recognised by its shape, not its key:
- verda `instance_types` objects: string `price_per_hour` / `spot_price` per instance, `currency`;
- vultr `plans_metal` / `plans`: `hourly_cost` (+ `_preemptible` -> spot) per instance, one row
  per location; VM plans are vGPU slices, so gpu_count = gpu_vram_gb / the model's memory;
- digitalocean `sizes`: `price_hourly` per droplet, `gpu_info{count, model}`, one row per region;
- jarvislabs `server_meta`: per-GPU `price_per_hour` / `spot_price` -> price_unit gpu-hour.
Monthly prices are kept in term_details only (hourly is what is compared). Vultr, DigitalOcean
and JarvisLabs quote USD without saying so; verda states its currency.
No timestamp in these payloads: observed_at is the fetch time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
    num_text,
    obs_table,
    term_json,
)

NAME = "gpuhunt_provider_json"
_MEMORY_GB = {"A100-80GB": 80, "A100-40GB": 40, "H100-SXM-80GB": 80, "L40S-48GB": 48, "A10-24GB": 24}


def detect(path: Path, head: bytes) -> bool:
    """Shapes: jarvislabs server_meta, vultr plans_metal, DO sizes with price_hourly, verda instance types."""
    t = head_text(head)
    return (
        '"server_meta"' in t
        or '"plans_metal"' in t
        or ('"price_hourly"' in t and '"slug"' in t)
        or (
            '"instance_type"' in t
            and '"price_per_hour"' in t
            and '"spot_price"' in t
            and '"number_of_gpus"' in t
        )
    )


def _walk(node: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (shape, payload) for every recognised response inside a bundle."""
    if isinstance(node, dict):
        if "server_meta" in node:
            yield "jarvislabs", node["server_meta"]
            return
        if "plans_metal" in node or ("plans" in node and isinstance(node["plans"], list)):
            yield "vultr", node.get("plans_metal", []) + node.get("plans", [])
            return
        if isinstance(node.get("sizes"), list):
            yield "digitalocean", node["sizes"]
            return
        if "instance_type" in node and "price_per_hour" in node:
            yield "verda", [node]
            return
        for k, v in node.items():
            yield from _walk(v, k)
    elif isinstance(node, list) and node and all(isinstance(x, dict) and "instance_type" in x for x in node):
        yield "verda", node


def _offers(shape: str, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Price offers (category, price, unit, regions, gpu, count, extra terms) of one API object."""
    if shape == "verda":
        gpu = item.get("gpu") or {}
        base = {
            "sku": item.get("instance_type"),
            "desc": item.get("name") or gpu.get("description"),
            "regions": [None],
            "currency": item.get("currency"),
            "unit": "hour",
            "gpu": gpu_model_from_text(gpu.get("description") or item.get("name"))
            if gpu.get("number_of_gpus")
            else None,
            "count": num_text(gpu.get("number_of_gpus")),
            "terms": {"id": item.get("id"), "description": item.get("description")},
        }
        yield {**base, "category": "on-demand", "price": item.get("price_per_hour")}
        if item.get("spot_price") is not None:
            yield {**base, "category": "spot", "price": item.get("spot_price")}
    elif shape == "vultr":
        sku = str(item.get("id") or "")
        if "gpu_type" in item:
            gpu = gpu_model_from_text(
                f"{item.get('gpu_type')} {item.get('gpu_vram_gb')}GB".replace("A100 80GB", "A100 80")
            )
            if gpu and gpu.startswith("A100"):
                gpu = "A100-80GB"  # Vultr's A100 vGPU slices are cut from 80GB cards (80vram = whole card)
            full = _MEMORY_GB.get(gpu or "")
            count = (
                num_text(Decimal(item["gpu_vram_gb"]) / full) if full and item.get("gpu_vram_gb") else None
            )
        else:
            m = re.search(r"-(\d+)-([a-z0-9]+)-gpu$", sku)
            gpu = gpu_model_from_text(m.group(2)) if m else None
            count = m.group(1) if m else None
        base = {
            "sku": sku,
            "desc": item.get("cpu_model") or item.get("type"),
            "regions": item.get("locations") or [None],
            "currency": "USD",
            "unit": "hour",
            "gpu": gpu,
            "count": count,
            "terms": {
                "monthly_cost": _s(item.get("monthly_cost")),
                "monthly_cost_preemptible": _s(item.get("monthly_cost_preemptible")),
            },
        }
        yield {**base, "category": "on-demand", "price": item.get("hourly_cost")}
        if item.get("hourly_cost_preemptible") is not None:
            yield {**base, "category": "spot", "price": item.get("hourly_cost_preemptible")}
    elif shape == "digitalocean":
        info = item.get("gpu_info") or {}
        yield {
            "sku": item.get("slug"),
            "desc": item.get("description"),
            "regions": item.get("regions") or [None],
            "currency": "USD",
            "unit": "hour",
            "gpu": gpu_model_from_text(str(info.get("model") or "")) if info else None,
            "count": num_text(info.get("count")),
            "terms": {"price_monthly": _s(item.get("price_monthly")), "available": item.get("available")},
            "category": "on-demand",
            "price": item.get("price_hourly"),
        }
    elif shape == "jarvislabs":
        base = {
            "sku": item.get("gpu_type"),
            "desc": f"{item.get('gpu_type')} {item.get('vram')}GB",
            "regions": [item.get("region")],
            "currency": "USD",
            "unit": "gpu-hour",
            "gpu": gpu_model_from_text(f"{item.get('gpu_type')} {item.get('vram')}GB"),
            "count": "1",
            "terms": {"workload_type": item.get("workload_type"), "max_gpus": num_text(item.get("num_gpus"))},
        }
        yield {**base, "category": "on-demand", "price": item.get("price_per_hour")}
        if item.get("spot_price") is not None:
            yield {**base, "category": "spot", "price": item.get("spot_price")}


def _s(value: Any) -> str | None:
    return None if value is None else str(value)


def parse(path: Path, fetched_at: datetime | None = None) -> ParseOutput:
    """gpuhunt fixture bundle or one provider response -> gpu_price_observations."""
    path = Path(path)
    doc, warnings = load_json(path)
    observed, basis, note = fetch_time(path, fetched_at)
    if note:
        warnings.append(note)
    rows: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    index = 0
    found = False
    for shape, items in _walk(doc):
        found = True
        for item in items:
            index += 1
            for offer in _offers(shape, item):
                price, bad = check_price(offer["price"], index)
                currency, bad_cur = check_currency(offer["currency"], index)
                if bad or bad_cur:
                    rejects.append(bad or bad_cur)
                    continue
                for region in offer["regions"]:
                    rows.append(
                        {
                            "provider": shape,
                            "sku": offer["sku"],
                            "sku_description": offer["desc"],
                            "region": region,
                            "pricing_category": offer["category"],
                            "term_details": term_json(**offer["terms"]),
                            "currency": currency,
                            "price": price,
                            "price_unit": offer["unit"],
                            "gpu_model": offer["gpu"],
                            "gpu_count": offer["count"],
                            "observed_at": observed,
                            "observed_at_basis": basis,
                            "source": f"gpuhunt:{shape}",
                            "source_format": NAME,
                            "_source_line": index,
                        }
                    )
    if not found:
        raise UnreadableFile(
            path, None, "no verda/vultr/digitalocean/jarvislabs price response found in the JSON"
        )
    return ParseOutput(tables={OBSERVATIONS: obs_table(rows, rejects)}, rejects=rejects, warnings=warnings)


FORMATS = [SourceFormat(NAME, "prices", detect, parse, "gpuhunt-captured neocloud provider API responses")]
