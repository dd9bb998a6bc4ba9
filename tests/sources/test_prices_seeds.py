"""dbt seeds for prices: every GPU SKU in the real price files maps to a catalogued GPU model."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb

SEEDS = Path(__file__).resolve().parents[2] / "dbt" / "seeds"
# Accelerators that are not GPUs: priced, but never expressed per GPU-hour (Trainium, Inferentia,
# Gaudi, Qualcomm AI100, FPGAs, Xilinx media accelerators).
NON_GPU_FAMILIES = ("trn1", "trn1n", "trn2", "inf1", "inf2", "dl1", "dl2q", "f1", "f2", "vt1")


def _seed(name):
    with open(SEEDS / name, newline="") as fh:
        return list(csv.DictReader(fh))


def test_catalog_ids_unique_and_sourced():
    rows = _seed("gpu_catalog.csv")
    ids = [r["gpu_model"] for r in rows]
    assert len(ids) == len(set(ids))
    for required in (
        "A100-40GB",
        "A100-80GB",
        "H100-SXM-80GB",
        "H100-PCIe-80GB",
        "H100-NVL-94GB",
        "H200-SXM-141GB",
        "B200-180GB",
        "GB200",
        "L40S-48GB",
        "L4-24GB",
        "A10G-24GB",
        "A10-24GB",
        "T4-16GB",
        "V100-16GB",
        "V100-32GB",
        "RTX-4090-24GB",
        "RTX-5090-32GB",
        "RTX-PRO-6000-96GB",
    ):
        assert required in ids
    assert all(r["source"] and r["memory_gb"] for r in rows)


def test_map_points_at_catalog():
    models = {r["gpu_model"] for r in _seed("gpu_catalog.csv")}
    rows = _seed("instance_gpu_map.csv")
    assert [r for r in rows if r["gpu_model"] not in models] == []
    keys = [(r["provider"], r["sku"]) for r in rows]
    assert len(keys) == len(set(keys))
    assert all(r["gpu_count"] or "not verified" in r["note"] for r in rows)


def test_every_karpenter_gpu_sku_is_mapped(public_data):
    mapped = {(r["provider"], r["sku"]) for r in _seed("instance_gpu_map.csv")}
    con = duckdb.connect()
    aws = con.execute(
        "select distinct instance_type, family from read_csv(?, all_varchar = true)",
        [str(public_data / "prices/karpenter_aws_ondemand_gpu_prices_history.csv")],
    ).fetchall()
    azure = con.execute(
        "select distinct arm_sku_name from read_csv(?, all_varchar = true)",
        [str(public_data / "prices/karpenter_azure_ondemand_gpu_prices_history.csv")],
    ).fetchall()
    unmapped = sorted(
        [("aws", sku) for sku, fam in aws if fam not in NON_GPU_FAMILIES and ("aws", sku) not in mapped]
        + [("azure", sku) for (sku,) in azure if ("azure", sku) not in mapped]
    )
    print("unmapped GPU SKUs:", unmapped)
    assert unmapped == []
    non_gpu = sorted({fam for _, fam in aws if fam in NON_GPU_FAMILIES})
    print("explicitly unmapped non-GPU accelerator families:", non_gpu)
    assert non_gpu == ["dl1", "f1", "f2", "inf1", "inf2", "trn1", "trn1n", "vt1"]
    assert not any(("aws", sku) in mapped for sku, fam in aws if fam in NON_GPU_FAMILIES)


def test_gpu_price_sources_in_samples_are_mapped(public_data):
    from sources.prices import gcp_skus, gpuhunt, oci_pricelist

    mapped = {(r["provider"], r["sku"]) for r in _seed("instance_gpu_map.csv")}
    rows = []
    for parse, name in (
        (gcp_skus.parse, "gcp_cloudbilling_skus_api_sample.json"),
        (oci_pricelist.parse, "oci_pricelist_api_prices_usd.json"),
        (gpuhunt.parse, "gpuhunt_provider_api_fixtures.json"),
    ):
        rows += parse(public_data / "prices" / name).tables["gpu_price_observations"].to_pylist()
    gpu_rows = {(r["provider"], r["sku"]) for r in rows if r["gpu_model"] or r["price_unit"] == "gpu-hour"}
    assert sorted(gpu_rows - mapped) == []
