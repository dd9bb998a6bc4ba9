"""The bottom floor: shared reference facts, written once, imported by every layer.

Pure data and pure functions: this package imports the standard library only and nothing of the
project, so the dependencies point one way. `sources/` (the parsers) and `warehouse/` (the loader,
the expectations, the dbt generator) both import it; it imports neither (tests/test_layout.py).

- this module: currencies (ISO 4217), FOCUS enumerations, GPU names (the alias list and the name rules);
- `reference.instances`: the instance catalogue (instance type -> GPU model and count);
- `reference.mig`: MIG profiles per GPU model;
- `reference.tags`: built-in tag keys and their normalised form;
- `reference.bounds`: the plausibility bounds, each with its physics or market reason.

Everything the dbt project needs from here is generated into it by `warehouse/reference.py`
(.venv/bin/python -m warehouse.reference --write; docs/reference.md).
"""

from __future__ import annotations

import re

from reference.bounds import (  # noqa: F401 - re-exported
    PLAUSIBILITY,
    UNITS_PER_USD_CEILING,
    UNITS_PER_USD_DEFAULT,
    units_per_usd_case,
)
from reference.instances import INSTANCE_TYPES, InstanceType, find_instance, instance_of  # noqa: F401
from reference.mig import MIG_COLUMNS, MIG_PROFILES, MigProfile, mig_fraction  # noqa: F401 - re-exported
from reference.tags import DEFAULT_TAG_KEYS, tag_key_norm  # noqa: F401 - re-exported

# --------------------------------------------------------------------------------------------------
# Currencies
# --------------------------------------------------------------------------------------------------

#: ISO 4217 active currency codes: what a source file may carry. A price or spend amount in
#: anything else is rejected (unknown_currency) rather than guessed, because FX conversion
#: downstream needs a real code.
ISO_4217_CODES: tuple[str, ...] = (
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD", "BIF",
    "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLP", "CNY", "COP", "CRC",
    "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS",
    "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD",
    "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL",
    "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MYR", "MZN", "NAD",
    "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD",
    "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP",
    "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS", "VES",
    "VND", "VUV", "WST", "XAF", "XCD", "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWL",
)

#: ISO 4217 "no currency". Not accepted from a source file; dbt staging gives it to FOCUS lines
#: that carry no BillingCurrency (stg_focus__charges), so the warehouse holds it.
NO_CURRENCY = "XXX"

#: Every code the warehouse may hold (sorted): the ISO codes plus NO_CURRENCY. dbt's
#: `known_currencies()` (column_constraints' `currency_is_known` check) and the GX suites check against this list.
CURRENCIES: tuple[str, ...] = tuple(sorted((*ISO_4217_CODES, NO_CURRENCY)))

#: Set views for membership tests in parsers (one per list, shared: import these, do not copy).
ISO_4217_SET: frozenset[str] = frozenset(ISO_4217_CODES)
CURRENCY_SET: frozenset[str] = frozenset(CURRENCIES)

# --------------------------------------------------------------------------------------------------
# FOCUS
# --------------------------------------------------------------------------------------------------

#: Canonical spellings of FOCUS enum values (values are compared case-insensitively).
#: sources.billing.mappings re-exports this as FOCUS_ENUMS.
FOCUS_ENUMS: dict[str, tuple[str, ...]] = {
    "ChargeCategory": ("Usage", "Purchase", "Tax", "Credit", "Adjustment"),
    "ChargeClass": ("Correction",),
    "ChargeFrequency": ("One-Time", "Recurring", "Usage-Based"),
    "PricingCategory": ("Standard", "Dynamic", "Committed", "Other"),
    "CommitmentDiscountStatus": ("Used", "Unused"),
    "CommitmentDiscountCategory": ("Spend", "Usage"),
}

# --------------------------------------------------------------------------------------------------
# GPU names
# --------------------------------------------------------------------------------------------------
# A GPU named somewhere -> canonical id (the `gpu_model` keys of dbt/seeds/gpu_catalog.csv), in two
# steps, the same in Python and in dbt:
#   1. the alias list: the name, trimmed of spaces and lower-cased (gpu_alias_key), looked up in
#      GPU_ALIASES (exact names tools report, with the assumption a short name implies);
#   2. else the name rules (GPU_NAME_RULES) on the upper-cased name, `_` read as a space.
# Price parsers (sources/prices) use step 2 only: an alias such as Slurm's bare `a100` encodes a
# cluster assumption that does not hold for a cloud SKU.

#: Name rules, first match wins; longer / more specific names first (L40S before L40 before L4, A100
#: before A10). Patterns must mean the same in Python `re`, DuckDB (RE2) and Spark (Java): no
#: look-around, so word boundaries are spelled as character classes. Where a name leaves memory or
#: form factor open, the rule picks what clouds rent by default (H100 -> SXM 80GB, V100 -> 16GB,
#: A100 -> 40GB unless 80GB follows the name, optionally after SXM4/PCIe).
GPU_NAME_RULES: tuple[tuple[str, str], ...] = (
    (r"GB200", "GB200"),
    (r"B300", "B300-288GB"),
    (r"B200", "B200-180GB"),
    (r"GH200", "GH200-96GB"),
    (r"H200", "H200-SXM-141GB"),
    (r"H100\W*NVL", "H100-NVL-94GB"),
    (r"H100\W*PCIE", "H100-PCIe-80GB"),
    (r"H100", "H100-SXM-80GB"),
    (r"A100\W*((SXM4?|PCIE)\W*)?80", "A100-80GB"),
    (r"A100", "A100-40GB"),
    (r"L40S", "L40S-48GB"),
    (r"L40([^0-9]|$)", "L40-48GB"),
    (r"(^|[^A-Z0-9])L4([^0-9]|$)", "L4-24GB"),
    (r"A10G", "A10G-24GB"),
    (r"(^|[^A-Z0-9])A10([^0-9G]|$)", "A10-24GB"),
    (r"T4G", "T4G-16GB"),
    (r"(^|[^A-Z0-9])T4([^0-9]|$)", "T4-16GB"),
    (r"V100\W*32", "V100-32GB"),
    (r"V100", "V100-16GB"),
    (r"P100", "P100-16GB"),
    (r"(^|[^A-Z0-9])P40([^0-9]|$)", "P40-24GB"),
    (r"(^|[^A-Z0-9])P4([^0-9A-Z]|$)", "P4-8GB"),  # not P4D/P4DE (AWS p4d.24xlarge is A100)
    (r"K80", "K80-12GB"),
    (r"M60", "M60-8GB"),
    (r"RTX\W*PRO\W*6000", "RTX-PRO-6000-96GB"),
    (r"(RTX\W*)?A6000", "RTX-A6000-48GB"),
    (r"4090", "RTX-4090-24GB"),
    (r"5090", "RTX-5090-32GB"),
    (r"MI300X", "MI300X-192GB"),
)

#: GPU names as tools report them (nvidia-smi, DCGM modelName, MLPerf, Slurm gres types, Kubernetes
#: node labels, our benchmark formats) -> canonical id, with the source or assumption as a note.
#: Aliases are written as gpu_alias_key would make them (trimmed, lower case): they are join keys.
GPU_ALIASES: tuple[tuple[str, str, str], ...] = (
    ("nvidia h100-sxm-80gb", "H100-SXM-80GB", "benchmark own formats / MLPerf"),
    ("nvidia h100 80gb hbm3", "H100-SXM-80GB", "nvidia-smi name of the SXM5 part"),
    ("h100-sxm-80gb", "H100-SXM-80GB", ""),
    ("h100", "H100-SXM-80GB", "Slurm gres type; SXM assumed (the common cluster part)"),
    ("nvidia h100 nvl", "H100-NVL-94GB", "nvidia-smi / MLPerf"),
    ("nvidia h100-nvl-94gb", "H100-NVL-94GB", "MLPerf"),
    ("nvidia h100-pcie-80gb", "H100-PCIe-80GB", "MLPerf"),
    ("nvidia h100 pcie", "H100-PCIe-80GB", "nvidia-smi"),
    ("nvidia h200", "H200-SXM-141GB", "nvidia-smi"),
    ("nvidia h200-sxm-141gb", "H200-SXM-141GB", "MLPerf"),
    ("nvidia h200-sxm-141gb-cts", "H200-SXM-141GB", "MLPerf (custom thermal solution)"),
    ("h200", "H200-SXM-141GB", "Slurm gres type"),
    ("nvidia b200-sxm-180gb", "B200-180GB", "MLPerf"),
    ("nvidia b200", "B200-180GB", "nvidia-smi"),
    ("b200", "B200-180GB", "Slurm gres type"),
    ("nvidia gh200-grace-hopper-superchip-96gb", "GH200-96GB", "MLPerf"),
    ("nvidia a100-sxm4-40gb", "A100-40GB", "benchmark own formats"),
    ("nvidia a100-sxm4-80gb", "A100-80GB", "nvidia-smi / MLPerf"),
    ("nvidia a100 80gb pcie", "A100-80GB", "nvidia-smi"),
    ("nvidia a100-pcie-40gb", "A100-40GB", "nvidia-smi"),
    ("a100", "A100-80GB", "Slurm gres type (Habrok a100 nodes are 80GB? unknown: assumed 80GB)"),
    ("nvidia l40s", "L40S-48GB", "nvidia-smi / own formats / MLPerf"),
    ("l40s", "L40S-48GB", "Slurm gres type"),
    ("nvidia l4", "L4-24GB", "nvidia-smi"),
    ("nvidia a10g", "A10G-24GB", "DCGM modelName (AWS g5)"),
    ("nvidia a10", "A10-24GB", "nvidia-smi"),
    ("tesla t4", "T4-16GB", "DCGM modelName"),
    ("nvidia tesla t4", "T4-16GB", ""),
    ("tesla v100-sxm2-16gb", "V100-16GB", "nvidia-smi"),
    ("tesla v100-sxm2-32gb", "V100-32GB", "nvidia-smi"),
    ("tesla v100-pcie-32gb", "V100-32GB", "nvidia-smi"),
    ("v100", "V100-32GB", "Slurm gres type (Habrok v100 nodes: 32GB assumed)"),
    ("nvidia geforce rtx 4090", "RTX-4090-24GB", "nvidia-smi"),
    ("nvidia geforce rtx 5090", "RTX-5090-32GB", "nvidia-smi"),
    ("nvidia rtx pro 6000 blackwell server edition", "RTX-PRO-6000-96GB", "nvidia-smi"),
    ("nvidia-a10g", "A10G-24GB", "Kubernetes node label nvidia.com/gpu.product"),
    ("a10g", "A10G-24GB", "Slurm gres type / short name"),
    ("nvidia-h100-80gb-hbm3", "H100-SXM-80GB", "Kubernetes node label nvidia.com/gpu.product"),
    ("nvidia h200 nvl", "H200-SXM-141GB", "nvidia-smi (NVL part; catalog has one H200 id)"),
    ("tesla-t4", "T4-16GB", "Kubernetes node label nvidia.com/gpu.product"),
    ("t4", "T4-16GB", "Slurm gres type / short name"),
    ("l4", "L4-24GB", "Slurm gres type / short name"),
    ("a10", "A10-24GB", "Slurm gres type / short name"),
    ("nvidia l40", "L40-48GB", "nvidia-smi"),
)

#: alias -> canonical id
GPU_ALIAS_MAP: dict[str, str] = {alias: model for alias, model, _note in GPU_ALIASES}

_COMPILED_RULES = tuple((re.compile(pattern), model) for pattern, model in GPU_NAME_RULES)


def gpu_alias_key(name: str) -> str:
    """The alias join key: spaces trimmed, lower case. dbt spells it `lower(trim(name))`."""
    return name.strip(" ").lower()


def gpu_name_text(name: str) -> str:
    """What the name rules read: upper case, `_` as a space. dbt: `upper(replace(name, '_', ' '))`."""
    return name.upper().replace("_", " ")


def gpu_model_from_name(name: str | None) -> str | None:
    """Step 2 only: the canonical id the name rules give `name`, or None when no known GPU is named."""
    if not name:
        return None
    text = gpu_name_text(name)
    for pattern, model in _COMPILED_RULES:
        if pattern.search(text):
            return model
    return None


def gpu_model_of(name: str | None) -> str | None:
    """Both steps: the alias list, else the name rules (what dbt's join_gpu_alias + canonical_gpu_model do)."""
    if name is None:
        return None
    return GPU_ALIAS_MAP.get(gpu_alias_key(name)) or gpu_model_from_name(name)
