"""Daily on-demand price observations in the Karpenter pricing-history CSV formats (AWS, Azure).

One observation per day, region and instance type (the Karpenter bot regenerates its price file
daily). The prices are the ones billing charges: a type with `new_price` changes on the day
`Fleet.change_day` says, so the price history shows the change the bills show.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from pathlib import Path

from tools.generate.fleet import NODE_TYPES, Fleet

AWS_HEADER = "generated_at,commit,commit_date,source_path,region,currency,instance_type,family,on_demand_price_per_hour"
AZURE_HEADER = "generated_at,commit,commit_date,region,currency,arm_sku_name,on_demand_linux_price_per_hour"
AWS_SOURCE = "pkg/providers/pricing/zz_generated.pricing_aws.go"


def _price6(value) -> str:
    return f"{value:.6f}"


def write_prices(fleet: Fleet, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    aws, azure = [AWS_HEADER], [AZURE_HEADER]
    skus = sorted(NODE_TYPES)
    for d in range(fleet.days):
        gen = datetime(fleet.start.year, fleet.start.month, fleet.start.day) + timedelta(days=d, hours=6, minutes=13)
        commit = hashlib.sha1(f"karpenter-{fleet.seed}-{d}".encode()).hexdigest()
        commit_date = (gen + timedelta(hours=2, minutes=41) - timedelta(hours=7)).strftime("%Y-%m-%dT%H:%M:%S") + "-07:00"
        generated = gen.strftime("%Y-%m-%dT%H:%M:%SZ")
        for sku in skus:
            nt = NODE_TYPES[sku]
            price = _price6(fleet.price_at(sku, d))
            if nt.provider == "aws":
                aws.append(",".join([generated, commit, commit_date, AWS_SOURCE, nt.region, "USD", sku,
                                     sku.split(".")[0], price]))
            else:
                azure.append(f"{generated},{commit},{commit_date},{nt.region},USD,{sku},{price}")
    (out / "karpenter_aws_ondemand_prices.csv").write_text("\n".join(aws) + "\n", encoding="utf-8")
    (out / "karpenter_azure_ondemand_prices.csv").write_text("\n".join(azure) + "\n", encoding="utf-8")
    return {"karpenter_aws_ondemand_prices.csv": len(aws) - 1, "karpenter_azure_ondemand_prices.csv": len(azure) - 1}
