"""The instance catalogue: every instance type, VM size, shape or plan we price -> GPU model and count.

Part of the shared reference lists (pure data, standard library only; `warehouse.reference`
re-exports what parsers use, split out for the module size limit). ONE table serves everyone:
the price facts and billing lines in dbt (through the generated seed dbt/seeds/instance_gpu_map.csv)
and the benchmark parsers (through `instance_of` / `find_instance` / `hardware_from_text`), so a
benchmark naming `g5.2xlarge` gets the same GPU as the g5.2xlarge price. Regenerate the seed after
editing: .venv/bin/python -m warehouse.reference --write

Columns: provider, sku (exact spelling; matched case-insensitively), gpu_model (gpu_catalog id),
gpu_count (GPUs per instance as text; fractional for partitions and vGPU slices; blank = not
verified, see note), sku_kind, note. sku_kind says what the sku is, because price lists key some
prices by things that are not machines:
- `instance`: a machine a run can be placed on (AWS instance type, Azure VM size, GCP machine type,
  OCI shape, a neocloud plan): the only kind a benchmark's hardware text is resolved against;
- `price_id`: a price list's own SKU id for a per-GPU price (GCP SKU ids, OCI part numbers);
- `gpu`: a per-GPU offer named by its GPU (JarvisLabs): a GPU name, never an instance.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable

INSTANCE_COLUMNS = ("provider", "sku", "gpu_model", "gpu_count", "sku_kind", "note")
SKU_KINDS = ("instance", "price_id", "gpu")

_RTX_PRO_UNVERIFIED = "GPU count not verified (SKU newer than the mapping's references)"
_RTX_PRO_SIZES = (8, 16, 24, 32, 36, 64, 72, 128, 132, 144, 256, 264, 288, 320, 324)

INSTANCE_TYPES: tuple[tuple[str, str, str, str, str, str], ...] = (
    ('aws', 'p2.xlarge', 'K80-12GB', '1', 'instance', ''),
    ('aws', 'p2.8xlarge', 'K80-12GB', '8', 'instance', ''),
    ('aws', 'p2.16xlarge', 'K80-12GB', '16', 'instance', ''),
    ('aws', 'p3.2xlarge', 'V100-16GB', '1', 'instance', ''),
    ('aws', 'p3.8xlarge', 'V100-16GB', '4', 'instance', ''),
    ('aws', 'p3.16xlarge', 'V100-16GB', '8', 'instance', ''),
    ('aws', 'p3dn.24xlarge', 'V100-32GB', '8', 'instance', ''),
    ('aws', 'p4d.24xlarge', 'A100-40GB', '8', 'instance', ''),
    ('aws', 'p4de.24xlarge', 'A100-80GB', '8', 'instance', ''),
    ('aws', 'p5.4xlarge', 'H100-SXM-80GB', '1', 'instance', ''),
    ('aws', 'p5.48xlarge', 'H100-SXM-80GB', '8', 'instance', ''),
    ('aws', 'p5e.48xlarge', 'H200-SXM-141GB', '8', 'instance', ''),
    ('aws', 'p5en.48xlarge', 'H200-SXM-141GB', '8', 'instance', ''),
    ('aws', 'p6-b200.48xlarge', 'B200-180GB', '8', 'instance', ''),
    ('aws', 'p6-b300.48xlarge', 'B300-288GB', '8', 'instance', ''),
    ('aws', 'g2.2xlarge', 'K520-4GB', '1', 'instance', ''),
    ('aws', 'g2.8xlarge', 'K520-4GB', '4', 'instance', ''),
    ('aws', 'g3s.xlarge', 'M60-8GB', '1', 'instance', ''),
    ('aws', 'g3.4xlarge', 'M60-8GB', '1', 'instance', ''),
    ('aws', 'g3.8xlarge', 'M60-8GB', '2', 'instance', ''),
    ('aws', 'g3.16xlarge', 'M60-8GB', '4', 'instance', ''),
    ('aws', 'g4dn.xlarge', 'T4-16GB', '1', 'instance', ''),
    ('aws', 'g4dn.2xlarge', 'T4-16GB', '1', 'instance', ''),
    ('aws', 'g4dn.4xlarge', 'T4-16GB', '1', 'instance', ''),
    ('aws', 'g4dn.8xlarge', 'T4-16GB', '1', 'instance', ''),
    ('aws', 'g4dn.16xlarge', 'T4-16GB', '1', 'instance', ''),
    ('aws', 'g4dn.12xlarge', 'T4-16GB', '4', 'instance', ''),
    ('aws', 'g4dn.metal', 'T4-16GB', '8', 'instance', ''),
    ('aws', 'g4ad.xlarge', 'V520-8GB', '1', 'instance', ''),
    ('aws', 'g4ad.2xlarge', 'V520-8GB', '1', 'instance', ''),
    ('aws', 'g4ad.4xlarge', 'V520-8GB', '1', 'instance', ''),
    ('aws', 'g4ad.8xlarge', 'V520-8GB', '2', 'instance', ''),
    ('aws', 'g4ad.16xlarge', 'V520-8GB', '4', 'instance', ''),
    ('aws', 'g5.xlarge', 'A10G-24GB', '1', 'instance', ''),
    ('aws', 'g5.2xlarge', 'A10G-24GB', '1', 'instance', ''),
    ('aws', 'g5.4xlarge', 'A10G-24GB', '1', 'instance', ''),
    ('aws', 'g5.8xlarge', 'A10G-24GB', '1', 'instance', ''),
    ('aws', 'g5.16xlarge', 'A10G-24GB', '1', 'instance', ''),
    ('aws', 'g5.12xlarge', 'A10G-24GB', '4', 'instance', ''),
    ('aws', 'g5.24xlarge', 'A10G-24GB', '4', 'instance', ''),
    ('aws', 'g5.48xlarge', 'A10G-24GB', '8', 'instance', ''),
    ('aws', 'g6.xlarge', 'L4-24GB', '1', 'instance', ''),
    ('aws', 'g6.2xlarge', 'L4-24GB', '1', 'instance', ''),
    ('aws', 'g6.4xlarge', 'L4-24GB', '1', 'instance', ''),
    ('aws', 'g6.8xlarge', 'L4-24GB', '1', 'instance', ''),
    ('aws', 'g6.16xlarge', 'L4-24GB', '1', 'instance', ''),
    ('aws', 'g6.12xlarge', 'L4-24GB', '4', 'instance', ''),
    ('aws', 'g6.24xlarge', 'L4-24GB', '4', 'instance', ''),
    ('aws', 'g6.48xlarge', 'L4-24GB', '8', 'instance', ''),
    ('aws', 'g6e.xlarge', 'L40S-48GB', '1', 'instance', ''),
    ('aws', 'g6e.2xlarge', 'L40S-48GB', '1', 'instance', ''),
    ('aws', 'g6e.4xlarge', 'L40S-48GB', '1', 'instance', ''),
    ('aws', 'g6e.8xlarge', 'L40S-48GB', '1', 'instance', ''),
    ('aws', 'g6e.16xlarge', 'L40S-48GB', '1', 'instance', ''),
    ('aws', 'g6e.12xlarge', 'L40S-48GB', '4', 'instance', ''),
    ('aws', 'g6e.24xlarge', 'L40S-48GB', '4', 'instance', ''),
    ('aws', 'g6e.48xlarge', 'L40S-48GB', '8', 'instance', ''),
    ('aws', 'g5g.xlarge', 'T4G-16GB', '1', 'instance', ''),
    ('aws', 'g5g.2xlarge', 'T4G-16GB', '1', 'instance', ''),
    ('aws', 'g5g.4xlarge', 'T4G-16GB', '1', 'instance', ''),
    ('aws', 'g5g.8xlarge', 'T4G-16GB', '1', 'instance', ''),
    ('aws', 'g5g.16xlarge', 'T4G-16GB', '2', 'instance', ''),
    ('aws', 'g5g.metal', 'T4G-16GB', '2', 'instance', ''),
    ('aws', 'g6f.large', 'L4-24GB', '0.125', 'instance', 'fractional L4 (1/8)'),
    ('aws', 'g6f.xlarge', 'L4-24GB', '0.125', 'instance', 'fractional L4 (1/8)'),
    ('aws', 'g6f.2xlarge', 'L4-24GB', '0.25', 'instance', 'fractional L4 (1/4)'),
    ('aws', 'g6f.4xlarge', 'L4-24GB', '0.5', 'instance', 'fractional L4 (1/2)'),
    ('aws', 'gr6.4xlarge', 'L4-24GB', '1', 'instance', ''),
    ('aws', 'gr6.8xlarge', 'L4-24GB', '1', 'instance', ''),
    ('aws', 'gr6f.4xlarge', 'L4-24GB', '0.5', 'instance', 'fractional L4 (1/2)'),
    ('aws', 'g7e.2xlarge', 'RTX-PRO-6000-96GB', '1', 'instance', 'count inferred from size ladder; verify'),
    ('aws', 'g7e.4xlarge', 'RTX-PRO-6000-96GB', '1', 'instance', 'count inferred from size ladder; verify'),
    ('aws', 'g7e.8xlarge', 'RTX-PRO-6000-96GB', '1', 'instance', 'count inferred from size ladder; verify'),
    ('aws', 'g7e.12xlarge', 'RTX-PRO-6000-96GB', '2', 'instance', 'count inferred from size ladder; verify'),
    ('aws', 'g7e.24xlarge', 'RTX-PRO-6000-96GB', '4', 'instance', 'count inferred from size ladder; verify'),
    ('aws', 'g7e.48xlarge', 'RTX-PRO-6000-96GB', '8', 'instance', 'count inferred from size ladder; verify'),
    ('azure', 'Standard_NC6', 'K80-12GB', '1', 'instance', ''),
    ('azure', 'Standard_NC12', 'K80-12GB', '2', 'instance', ''),
    ('azure', 'Standard_NC24', 'K80-12GB', '4', 'instance', ''),
    ('azure', 'Standard_NC24r', 'K80-12GB', '4', 'instance', ''),
    ('azure', 'Standard_NV6', 'M60-8GB', '1', 'instance', ''),
    ('azure', 'Standard_NV12', 'M60-8GB', '2', 'instance', ''),
    ('azure', 'Standard_NV24', 'M60-8GB', '4', 'instance', ''),
    ('azure', 'Standard_NC6_Promo', 'K80-12GB', '1', 'instance', ''),
    ('azure', 'Standard_NC12_Promo', 'K80-12GB', '2', 'instance', ''),
    ('azure', 'Standard_NC24_Promo', 'K80-12GB', '4', 'instance', ''),
    ('azure', 'Standard_NC24r_Promo', 'K80-12GB', '4', 'instance', ''),
    ('azure', 'Standard_NV6_Promo', 'M60-8GB', '1', 'instance', ''),
    ('azure', 'Standard_NV12_Promo', 'M60-8GB', '2', 'instance', ''),
    ('azure', 'Standard_NV24_Promo', 'M60-8GB', '4', 'instance', ''),
    ('azure', 'Standard_NC6s_v2', 'P100-16GB', '1', 'instance', ''),
    ('azure', 'Standard_NC12s_v2', 'P100-16GB', '2', 'instance', ''),
    ('azure', 'Standard_NC24s_v2', 'P100-16GB', '4', 'instance', ''),
    ('azure', 'Standard_NC24rs_v2', 'P100-16GB', '4', 'instance', ''),
    ('azure', 'Standard_NC6s_v3', 'V100-16GB', '1', 'instance', ''),
    ('azure', 'Standard_NC12s_v3', 'V100-16GB', '2', 'instance', ''),
    ('azure', 'Standard_NC24s_v3', 'V100-16GB', '4', 'instance', ''),
    ('azure', 'Standard_NC24rs_v3', 'V100-16GB', '4', 'instance', ''),
    ('azure', 'Standard_NC4as_T4_v3', 'T4-16GB', '1', 'instance', ''),
    ('azure', 'Standard_NC8as_T4_v3', 'T4-16GB', '1', 'instance', ''),
    ('azure', 'Standard_NC16as_T4_v3', 'T4-16GB', '1', 'instance', ''),
    ('azure', 'Standard_NC64as_T4_v3', 'T4-16GB', '4', 'instance', ''),
    ('azure', 'Standard_NC24ads_A100_v4', 'A100-80GB', '1', 'instance', ''),
    ('azure', 'Standard_NC48ads_A100_v4', 'A100-80GB', '2', 'instance', ''),
    ('azure', 'Standard_NC96ads_A100_v4', 'A100-80GB', '4', 'instance', ''),
    ('azure', 'Standard_NC8ads_A10_v4', 'A10-24GB', '0.333333', 'instance', '1/3 A10 partition'),
    ('azure', 'Standard_NC16ads_A10_v4', 'A10-24GB', '0.5', 'instance', '1/2 A10 partition'),
    ('azure', 'Standard_NC32ads_A10_v4', 'A10-24GB', '1', 'instance', ''),
    ('azure', 'Standard_NC40ads_H100_v5', 'H100-NVL-94GB', '1', 'instance', ''),
    ('azure', 'Standard_NCC40ads_H100_v5', 'H100-NVL-94GB', '1', 'instance', ''),
    ('azure', 'Standard_NC80adis_H100_v5', 'H100-NVL-94GB', '2', 'instance', ''),
    ('azure', 'Standard_ND96asr_v4', 'A100-40GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96asr_A100_v4', 'A100-40GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96amsr_A100_v4', 'A100-80GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96ams_A100_v4', 'A100-80GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96isr_H100_v5', 'H100-SXM-80GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96is_H100_v5', 'H100-SXM-80GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96is_flex_H100_v5', 'H100-SXM-80GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96is_noIB_H100_v5', 'H100-SXM-80GB', '8', 'instance', ''),
    ('azure', 'Standard_ND96isrf_H100_v5', 'H100-SXM-80GB', '8', 'instance', ''),
    ('azure', 'Standard_ND128isr_NDR_GB200_v6', 'GB200', '4', 'instance', ''),
    ('azure', 'Standard_ND6s', 'P40-24GB', '1', 'instance', ''),
    ('azure', 'Standard_ND12s', 'P40-24GB', '2', 'instance', ''),
    ('azure', 'Standard_ND24s', 'P40-24GB', '4', 'instance', ''),
    ('azure', 'Standard_ND24rs', 'P40-24GB', '4', 'instance', ''),
    ('azure', 'Standard_ND40rs_v2', 'V100-32GB', '8', 'instance', ''),
    ('azure', 'Standard_ND40s_v2', 'V100-32GB', '8', 'instance', ''),
    ('azure', 'Standard_NG8ads_V620_v1', 'V620-32GB', '0.25', 'instance', '1/4 V620 partition'),
    ('azure', 'Standard_NG16ads_V620_v1', 'V620-32GB', '0.5', 'instance', '1/2 V620 partition'),
    ('azure', 'Standard_NG32ads_V620_v1', 'V620-32GB', '1', 'instance', ''),
    ('azure', 'Standard_NG32adms_V620', 'V620-32GB', '1', 'instance', ''),
    ('azure', 'Standard_NV12s_v3', 'M60-8GB', '1', 'instance', ''),
    ('azure', 'Standard_NV24s_v3', 'M60-8GB', '2', 'instance', ''),
    ('azure', 'Standard_NV48s_v3', 'M60-8GB', '4', 'instance', ''),
    ('azure', 'Standard_NV4as_v4', 'MI25-16GB', '0.125', 'instance', '1/8 MI25 partition'),
    ('azure', 'Standard_NV8as_v4', 'MI25-16GB', '0.25', 'instance', '1/4 MI25 partition'),
    ('azure', 'Standard_NV16as_v4', 'MI25-16GB', '0.5', 'instance', '1/2 MI25 partition'),
    ('azure', 'Standard_NV32as_v4', 'MI25-16GB', '1', 'instance', ''),
    ('azure', 'Standard_NV6ads_A10_v5', 'A10-24GB', '0.166667', 'instance', '1/6 A10 partition'),
    ('azure', 'Standard_NV12ads_A10_v5', 'A10-24GB', '0.333333', 'instance', '1/3 A10 partition'),
    ('azure', 'Standard_NV18ads_A10_v5', 'A10-24GB', '0.5', 'instance', '1/2 A10 partition'),
    ('azure', 'Standard_NV36ads_A10_v5', 'A10-24GB', '1', 'instance', ''),
    ('azure', 'Standard_NV36adms_A10_v5', 'A10-24GB', '1', 'instance', ''),
    ('azure', 'Standard_NV72ads_A10_v5', 'A10-24GB', '2', 'instance', ''),
    ('azure', 'Standard_NV4ads_V710_v5', 'V710-28GB', '0.166667', 'instance', 'partition inferred from price ladder; verify'),
    ('azure', 'Standard_NV8ads_V710_v5', 'V710-28GB', '0.333333', 'instance', 'partition inferred from price ladder; verify'),
    ('azure', 'Standard_NV12ads_V710_v5', 'V710-28GB', '0.5', 'instance', 'partition inferred from price ladder; verify'),
    ('azure', 'Standard_NV24ads_V710_v5', 'V710-28GB', '1', 'instance', 'count inferred from price ladder; verify'),
    ('azure', 'Standard_NV28ads_V710_v5', 'V710-28GB', '1', 'instance', 'count inferred from price ladder; verify'),
    ('azure', 'Standard_NV28adms_V710_v5', 'V710-28GB', '1', 'instance', 'count inferred from price ladder; verify'),
) + tuple(
    ("azure", f"Standard_NC{size}{variant}_xl_RTXPRO6000BSE_v6", "RTX-PRO-6000-96GB", "", "instance", _RTX_PRO_UNVERIFIED)
    for size in _RTX_PRO_SIZES for variant in ("ds", "lds")
) + (
    ('gcp', '039F-D0DA-4055', 'A100-40GB', '1', 'price_id', 'GCP SKU id, per-GPU price'),
    ('oci', 'B88517', 'P100-16GB', '1', 'price_id', 'OCI X7 GPU standard shapes (BM.GPU2.2 / VM.GPU2.1), per-GPU price'),
    ('oci', 'B88518', 'P100-16GB', '1', 'price_id', 'OCI X7 GPU standard shapes (BM.GPU2.2 / VM.GPU2.1), per-GPU price'),
    ('oci', 'B89734', 'V100-16GB', '1', 'price_id', 'OCI GPU3 shapes (V2), per-GPU price'),
    ('oci', 'B92740', 'A100-40GB', '1', 'price_id', "OCI 'GPU - E3' assumed BM.GPU4.8 (A100 40GB on E3 hosts); verify"),
    ('oci', 'B95907', 'A100-80GB', '1', 'price_id', 'OCI BM.GPU.A100-v2.8, per-GPU price'),
    ('oci', 'B95909', 'A10-24GB', '1', 'price_id', 'OCI GPU.A10 shapes, per-GPU price'),
    ('oci', 'B98415', 'H100-SXM-80GB', '1', 'price_id', 'OCI BM.GPU.H100.8, per-GPU price'),
    ('verda', '1H100.80S.30V', 'H100-SXM-80GB', '1', 'instance', ''),
    ('verda', '2A6000.20V', 'RTX-A6000-48GB', '2', 'instance', ''),
    ('vultr', 'vbm-256c-2048gb-8-mi300x-gpu', 'MI300X-192GB', '8', 'instance', ''),
    ('vultr', 'vbm-112c-2048gb-8-h100-gpu', 'H100-SXM-80GB', '8', 'instance', ''),
    ('vultr', 'vcg-a100-1c-6g-4vram', 'A100-80GB', '0.05', 'instance', 'vGPU slice: 4 of 80 GB'),
    ('vultr', 'vcg-a100-6c-60g-40vram', 'A100-80GB', '0.5', 'instance', 'vGPU slice: 40 of 80 GB'),
    ('vultr', 'vcg-a100-12c-120g-80vram', 'A100-80GB', '1', 'instance', ''),
    ('digitalocean', 'gpu-h100x8-640gb', 'H100-SXM-80GB', '8', 'instance', ''),
    ('digitalocean', 'gpu-mi300x8-1536gb', 'MI300X-192GB', '8', 'instance', ''),
    ('jarvislabs', 'L4', 'L4-24GB', '1', 'gpu', 'per-GPU price'),
    ('jarvislabs', 'A100-80GB', 'A100-80GB', '1', 'gpu', 'per-GPU price'),
    ('jarvislabs', 'H100', 'H100-SXM-80GB', '1', 'gpu', 'per-GPU price'),
    ('jarvislabs', 'RTX-PRO6000', 'RTX-PRO-6000-96GB', '1', 'gpu', 'per-GPU price'),
    ('jarvislabs', 'RTX PRO 6000', 'RTX-PRO-6000-96GB', '1', 'gpu', 'per-GPU price'),
    # GCP machine types with attached GPUs (GCP "GPU machine types" documentation)
    *(("gcp", f"a2-highgpu-{n}g", "A100-40GB", str(n), "instance", "") for n in (1, 2, 4, 8)),
    ("gcp", "a2-megagpu-16g", "A100-40GB", "16", "instance", ""),
    *(("gcp", f"a2-ultragpu-{n}g", "A100-80GB", str(n), "instance", "") for n in (1, 2, 4, 8)),
    *(("gcp", f"a3-highgpu-{n}g", "H100-SXM-80GB", str(n), "instance", "") for n in (1, 2, 4, 8)),
    ("gcp", "a3-edgegpu-8g", "H100-SXM-80GB", "8", "instance", ""),
    ("gcp", "a3-megagpu-8g", "H100-SXM-80GB", "8", "instance", ""),
    ("gcp", "a3-ultragpu-8g", "H200-SXM-141GB", "8", "instance", ""),
    ("gcp", "a4-highgpu-8g", "B200-180GB", "8", "instance", ""),
    *(("gcp", f"g2-standard-{v}", "L4-24GB", str(n), "instance", "")
      for v, n in ((4, 1), (8, 1), (12, 1), (16, 1), (24, 2), (32, 1), (48, 4), (96, 8))),
    # OCI GPU shapes (OCI "Compute shapes" documentation); the trailing number is the GPU count
    ("oci", "BM.GPU2.2", "P100-16GB", "2", "instance", ""),
    ("oci", "VM.GPU2.1", "P100-16GB", "1", "instance", ""),
    ("oci", "BM.GPU3.8", "V100-16GB", "8", "instance", ""),
    *(("oci", f"VM.GPU3.{n}", "V100-16GB", str(n), "instance", "") for n in (1, 2, 4)),
    ("oci", "BM.GPU4.8", "A100-40GB", "8", "instance", ""),
    ("oci", "BM.GPU.A100-v2.8", "A100-80GB", "8", "instance", ""),
    *(("oci", f"VM.GPU.A10.{n}", "A10-24GB", str(n), "instance", "") for n in (1, 2)),
    ("oci", "BM.GPU.A10.4", "A10-24GB", "4", "instance", ""),
    ("oci", "BM.GPU.L40S.4", "L40S-48GB", "4", "instance", ""),
    ("oci", "BM.GPU.H100.8", "H100-SXM-80GB", "8", "instance", ""),
    ("oci", "BM.GPU.H200.8", "H200-SXM-141GB", "8", "instance", ""),
    ("oci", "BM.GPU.MI300X.8", "MI300X-192GB", "8", "instance", ""),
)


class InstanceType(tuple):
    """One catalogue row with named fields (a plain tuple underneath, as written above)."""

    __slots__ = ()
    provider = property(lambda self: self[0])
    sku = property(lambda self: self[1])
    gpu_model = property(lambda self: self[2])
    gpu_count = property(lambda self: self[3])
    sku_kind = property(lambda self: self[4])
    note = property(lambda self: self[5])

    @property
    def gpus(self) -> float | None:
        """GPUs per instance as a number (None when not verified)."""
        return float(self[3]) if self[3] else None


def _instance_index() -> dict[str, InstanceType]:
    # A name two providers use for different GPUs would be a guess: such a name is left out.
    seen: dict[str, set[tuple[str, str]]] = {}
    rows: dict[str, InstanceType] = {}
    for row in INSTANCE_TYPES:
        if row[4] != "instance":
            continue
        key = row[1].lower()
        seen.setdefault(key, set()).add((row[2], row[3]))
        rows[key] = InstanceType(row)
    return {key: row for key, row in rows.items() if len(seen[key]) == 1}


#: lower-cased instance name -> row (sku_kind `instance` only: price ids and GPU names are no machine)
INSTANCE_INDEX: dict[str, InstanceType] = _instance_index()

# Every catalogued name, longest first so `p4de.24xlarge` is not read as `p4d...`; a name must stand
# alone: no letter, digit, `.` or `_` may touch it (`Standard_NC6` is not in `Standard_NC6s_v3`),
# while `-` and spaces may (`ib-Standard_ND96asr_v4-GPUDirect`, `a3-highgpu-8g x 2`).
_INSTANCE_RE = re.compile(
    r"(?<![A-Za-z0-9._])("
    + "|".join(re.escape(name) for name in sorted(INSTANCE_INDEX, key=len, reverse=True))
    + r")(?![A-Za-z0-9._])",
    re.IGNORECASE,
)


def instance_of(name: str | None) -> InstanceType | None:
    """The catalogue row of an instance named exactly (case-insensitive, spaces trimmed), or None."""
    return INSTANCE_INDEX.get(name.strip().lower()) if name else None


def find_instance(text: str | None) -> tuple[InstanceType, int, int] | None:
    """The first catalogued instance named inside free text, with its span; None when there is none."""
    match = _INSTANCE_RE.search(text) if text else None
    if match is None:
        return None
    return INSTANCE_INDEX[match.group(1).lower()], match.start(1), match.end(1)


def render_instance_gpu_map_csv() -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(INSTANCE_COLUMNS)
    writer.writerows(INSTANCE_TYPES)
    return out.getvalue()


def check_instance_types(gpu_model_known: Callable[[str], bool] | None = None) -> None:
    """Invariants of the catalogue (run by reference._check_lists and tests/test_reference.py)."""
    keys = [(r[0], r[1]) for r in INSTANCE_TYPES]
    assert len(keys) == len(set(keys)), "INSTANCE_TYPES: a (provider, sku) appears twice"
    assert all(len(r) == len(INSTANCE_COLUMNS) for r in INSTANCE_TYPES)
    assert all(r[4] in SKU_KINDS for r in INSTANCE_TYPES), "INSTANCE_TYPES: unknown sku_kind"
    assert all(r[3] or "not verified" in r[5] for r in INSTANCE_TYPES), "blank gpu_count needs a note"
    assert all(float(r[3]) > 0 for r in INSTANCE_TYPES if r[3]), "gpu_count must be positive"
    assert all(r[1] == r[1].strip() and "," not in r[1] for r in INSTANCE_TYPES)
    if gpu_model_known is not None:
        unknown = sorted({r[2] for r in INSTANCE_TYPES if not gpu_model_known(r[2])})
        assert not unknown, f"INSTANCE_TYPES: GPU models not in gpu_catalog: {unknown}"
