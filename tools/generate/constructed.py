"""Writes the constructed April 2025 fleet sample: a FOCUS 1.2 export, its invoice totals and a
DCGM series for the chat-assistant VMs (samples/inputs/billing/, samples/inputs/usage/).

A small FOCUS 1.2 export CONSTRUCTED for the bundled sample (no public FOCUS 1.2 export with
GPU lines and team tags exists): the GPU fleet behind the serving and batch workloads in
April 2025, priced with the real Karpenter on-demand prices of that date (Azure
Standard_ND96asr_v4 eastus 27.197 $/h; AWS p4d.24xlarge us-east-1 32.7726 $/h), plus storage,
network, a support-plan shared line, tax and a credit. Deterministic: run it to regenerate.

    python -m tools.generate constructed                # rewrites samples/inputs/{billing,usage}/
    python -m tools.generate constructed --out /tmp/c   # the same bytes under /tmp/c/{billing,usage}/
"""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "inputs"
FOCUS_FILE = "billing/focus_1.2_fleet_2025-04_constructed.csv"
INVOICE_FILE = "billing/invoice_totals_2025-04_constructed.csv"
DCGM_FILE = "usage/dcgm_chat70b_2025-04_constructed.csv"
COLUMNS = [
    "BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "ListUnitPrice", "ContractedUnitPrice",
    "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodStart", "BillingPeriodEnd",
    "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency", "ChargePeriodStart",
    "ChargePeriodEnd", "ConsumedQuantity", "ConsumedUnit", "PricingQuantity", "PricingUnit", "PricingCategory",
    "ProviderName", "PublisherName", "InvoiceIssuerName", "InvoiceId", "RegionId", "RegionName", "ResourceId",
    "ResourceName", "ResourceType", "ServiceCategory", "ServiceSubcategory", "ServiceName", "SkuId", "SkuPriceId",
    "SubAccountId", "SubAccountName", "Tags", "CapacityReservationId", "CommitmentDiscountId",
]
ACCOUNTS = {"azure": ("az-ea-4471", "Contoso AI EA"), "aws": ("551230004321", "contoso-ml-payer")}


def line(provider: str, day: int, hours: int, start_hour: int, unit_price: str, qty: Decimal, desc: str,
         resource: str, rtype: str, category: str, service: str, tags: dict, charge_category: str = "Usage",
         unit: str = "Hours") -> dict:
    account, account_name = ACCOUNTS[provider]
    cost = (Decimal(unit_price) * qty).quantize(Decimal("0.000001"))
    start = f"2025-04-{day:02d} {start_hour:02d}:00:00"
    end_hour = start_hour + hours
    end = f"2025-04-{day + end_hour // 24:02d} {end_hour % 24:02d}:00:00"
    return {
        "BilledCost": cost, "EffectiveCost": cost, "ListCost": cost, "ContractedCost": cost,
        "ListUnitPrice": unit_price, "ContractedUnitPrice": unit_price,
        "BillingAccountId": account, "BillingAccountName": account_name, "BillingCurrency": "USD",
        "BillingPeriodStart": "2025-04-01 00:00:00", "BillingPeriodEnd": "2025-05-01 00:00:00",
        "ChargeCategory": charge_category, "ChargeClass": "", "ChargeDescription": desc,
        "ChargeFrequency": "Usage-Based" if charge_category == "Usage" else "One-Time",
        "ChargePeriodStart": start, "ChargePeriodEnd": end, "ConsumedQuantity": qty, "ConsumedUnit": unit,
        "PricingQuantity": qty, "PricingUnit": unit, "PricingCategory": "Standard",
        "ProviderName": "Microsoft" if provider == "azure" else "AWS",
        "PublisherName": "Microsoft" if provider == "azure" else "AWS",
        "InvoiceIssuerName": "Microsoft" if provider == "azure" else "AWS",
        "InvoiceId": f"INV-{provider.upper()}-2025-04", "RegionId": "eastus" if provider == "azure" else "us-east-1",
        "RegionName": "East US" if provider == "azure" else "US East (N. Virginia)",
        "ResourceId": resource, "ResourceName": resource.rsplit("/", 1)[-1], "ResourceType": rtype,
        "ServiceCategory": category, "ServiceSubcategory": "", "ServiceName": service,
        "SkuId": rtype, "SkuPriceId": "", "SubAccountId": account + "-prod", "SubAccountName": "ml-prod",
        "Tags": json.dumps(tags, sort_keys=True), "CapacityReservationId": "", "CommitmentDiscountId": "",
    }


def rows() -> list[dict]:
    chat = {"team": "support", "workload": "chat-assistant-70b", "environment": "prod"}
    batch = {"team": "support", "workload": "batch-summarise-70b", "environment": "prod"}
    embed = {"team": "platform", "workload": "search-embed", "environment": "prod"}
    out = []
    for day in (14, 15):
        for replica in (1, 2):  # two always-on replicas of the chat assistant, billed per day
            out.append(line("azure", day, 24, 0, "27.197", Decimal(24),
                            "Standard_ND96asr_v4 Virtual Machine, Linux, pay-as-you-go",
                            f"/subscriptions/ml-prod/resourceGroups/serving/providers/Microsoft.Compute/virtualMachines/chat70b-{replica}",
                            "Standard_ND96asr_v4", "Compute", "Virtual Machines", chat))
        out.append(line("aws", day, 6, 1, "32.7726", Decimal(6),
                        "$32.7726 per On Demand Linux p4d.24xlarge Instance Hour",
                        f"arn:aws:ec2:us-east-1:551230004321:instance/i-batch70b{day}", "p4d.24xlarge",
                        "Compute", "Amazon Elastic Compute Cloud", batch))
        out.append(line("aws", day, 24, 0, "1.861", Decimal(24),
                        "$1.861 per On Demand Linux g6e.xlarge Instance Hour",
                        f"arn:aws:ec2:us-east-1:551230004321:instance/i-embed{day}", "g6e.xlarge",
                        "Compute", "Amazon Elastic Compute Cloud", embed))
        out.append(line("aws", day, 24, 0, "0.0032876", Decimal(2000), "EBS gp3 storage, GB-hours",
                        "arn:aws:ec2:us-east-1:551230004321:volume/vol-batch70b", "gp3", "Storage",
                        "Amazon Elastic Block Store", batch, unit="GB-Hours"))
    out.append(line("azure", 15, 24, 0, "0.0087", Decimal(1800), "Data transfer out, internet egress (GB)",
                    "/subscriptions/ml-prod/providers/Microsoft.Network/egress", "egress", "Networking",
                    "Bandwidth", chat, unit="GB"))
    out.append(line("aws", 1, 24, 0, "480.00", Decimal(1), "AWS Business Support (monthly)",
                    "support", "support-plan", "Management and Governance", "AWS Support", {},
                    charge_category="Usage", unit="Months"))
    out.append(line("aws", 15, 24, 0, "-150.00", Decimal(1), "Promotional credit", "credit", "credit", "Compute",
                    "Amazon Elastic Compute Cloud", {}, charge_category="Credit", unit="Units"))
    aws_taxable = sum(r["BilledCost"] for r in out if r["ProviderName"] == "AWS" and r["ChargeCategory"] == "Usage")
    out.append(line("aws", 15, 24, 0, str((aws_taxable * Decimal("0.06")).quantize(Decimal("0.000001"))),
                    Decimal(1), "Sales tax 6 %", "tax", "tax", "Compute", "Tax", {}, charge_category="Tax",
                    unit="Units"))
    return out


def write_dcgm(path: Path) -> int:
    """DCGM series (dcgm_csv format) for the two chat-assistant VMs (8 x A100 each), 15-minute
    samples over the two billed days; utilisation follows a daily traffic curve (busy afternoons,
    quiet nights), so billed-but-unused GPU time shows up as idle."""
    import math

    fields = ["timestamp", "hostname", "gpu", "uuid", "modelName", "namespace", "pod", "container",
              "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED",
              "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE"]
    rows = 0
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(fields)
        for step in range(2 * 24 * 4):
            day, minute = 14 + step // 96, (step % 96) * 15
            hour = minute / 60
            # Traffic: a sine over the day peaking at 15:00 UTC, 10 % at night, 85 % at peak.
            load = 0.475 + 0.375 * math.sin((hour - 9) / 24 * 2 * math.pi)
            for replica in (1, 2):
                for gpu in range(8):
                    util = round(100 * load * (1.0 - 0.02 * gpu) * (0.9 if replica == 2 else 1.0))
                    writer.writerow([
                        f"2025-04-{day:02d}T{int(hour):02d}:{minute % 60:02d}:00Z", f"chat70b-{replica}", gpu,
                        f"GPU-{replica:04d}{gpu:04d}-0000-0000-0000-000000000000", "NVIDIA A100-SXM4-40GB",
                        "ml-serving", f"chat70b-{replica}", "vllm", util, f"{util / 100:.4f}", 37800, 2160,
                        f"{90 + 3.1 * util:.1f}",
                    ])
                    rows += 1
    return rows


def write(out: Path = SAMPLES) -> dict[str, int]:
    """Write the three constructed files under `out` (an inputs folder); returns rows per file."""
    for sub in ("billing", "usage"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    data = rows()
    path = out / FOCUS_FILE
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for r in data:
            writer.writerow({k: str(v) for k, v in r.items()})
    totals: dict[str, Decimal] = {}
    for r in data:
        totals[r["BillingAccountId"]] = totals.get(r["BillingAccountId"], Decimal(0)) + r["BilledCost"]
    with open(out / INVOICE_FILE, "w", newline="") as fh:
        fh.write("InvoiceId,BillingAccountId,BillingPeriodStart,BillingCurrency,InvoiceTotal\n")
        fh.writelines(f"INV-{provider.upper()}-2025-04,{account},2025-04-01,USD,{totals[account]}\n" for provider, (account, _) in sorted(ACCOUNTS.items()))
    return {FOCUS_FILE: len(data), INVOICE_FILE: len(ACCOUNTS), DCGM_FILE: write_dcgm(out / DCGM_FILE)}
