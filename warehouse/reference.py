"""Shared reference lists, written once: currencies, FOCUS enumerations, GPU names.

Pure data. This module imports the standard library only: no duckdb, no Dagster, nothing else from
`warehouse` but its MIG table (reference_mig.py, as pure; split out for the module size limit) or from
anywhere in the project, so that `sources/` parsers, which must not depend on
the database layer, may import it, and so may `warehouse.expectations`, the dbt project (through
the files generated from it) and the tests.

Everything the dbt project needs from here is generated into it, each file headed
"generated from warehouse/reference.py; do not edit":

- dbt/macros/known_currencies.sql   `known_currencies()`, which column_constraints' `currency_is_known` check reads;
- dbt/macros/canonical_gpu_model.sql `canonical_gpu_model(expr)` (the GPU name rules) and
                                      `join_gpu_alias(expr)` (the one join to the alias seed);
- dbt/seeds/gpu_aliases.csv          the alias list (CSV has no comments: dbt/seeds/README.md
                                      says it is generated).
- dbt/seeds/mig_profiles.csv         MIG_PROFILES, the MIG profile table (warehouse/reference_mig.py).
- dbt/seeds/instance_gpu_map.csv     INSTANCE_TYPES, the instance catalogue (warehouse/reference_instances.py).
- dbt/macros/billing_defaults.sql    plausibility bounds (warehouse/reference_bounds.py); tag keys and
                                      tag_key_norm (warehouse/reference_tags.py).

Regenerate after editing this file:  .venv/bin/python -m warehouse.reference --write
Check without writing (exit 1 when a file is stale): .venv/bin/python -m warehouse.reference --check
tests/test_reference.py fails while a generated file differs from what this module would write.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path

from warehouse import reference_instances as _instances
from warehouse import reference_mig as _mig
from warehouse import reference_tags as _tags
from warehouse.reference_bounds import PLAUSIBILITY, UNITS_PER_USD_CEILING, UNITS_PER_USD_DEFAULT
from warehouse.reference_instances import INSTANCE_TYPES, InstanceType, find_instance, instance_of  # noqa: F401
from warehouse.reference_mig import MIG_COLUMNS, MIG_PROFILES, MigProfile, mig_fraction  # noqa: F401 - re-exported
from warehouse.reference_tags import DEFAULT_TAG_KEYS, tag_key_norm  # noqa: F401 - re-exported

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


# --------------------------------------------------------------------------------------------------
# Generated dbt files
# --------------------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
HEADER = "generated from warehouse/reference.py; do not edit"
_REGENERATE = "regenerate: .venv/bin/python -m warehouse.reference --write"


def _sql_list(values: tuple[str, ...], indent: str, per_line: int = 16) -> str:
    rows = [values[i:i + per_line] for i in range(0, len(values), per_line)]
    return ",\n".join(indent + ", ".join(f"'{v}'" for v in row) for row in rows)


def render_known_currencies_sql() -> str:
    return f"""{{# {HEADER} ({_REGENERATE}).
   CURRENCIES: ISO 4217 active codes plus XXX ("no currency", which staging gives FOCUS lines that
   carry none); the GX suites check the same list. A price in any other code cannot be converted,
   so it fails the `currency_is_known` check of column_constraints. #}}
{{% macro known_currencies() -%}}
    {{{{ return([
{_sql_list(CURRENCIES, " " * 8)}
    ]) }}}}
{{%- endmacro %}}
"""


def _jinja_str(text: str) -> str:
    assert "'" not in text, text
    return "'" + text.replace("\\", "\\\\") + "'"


def render_gpu_macros_sql() -> str:
    rules = "\n".join(f"        ({_jinja_str(p)}, {_jinja_str(m)})," for p, m in GPU_NAME_RULES)
    return f"""{{# {HEADER} ({_REGENERATE}).
   A GPU named somewhere -> canonical gpu_catalog id: the gpu_aliases seed first (join_gpu_alias),
   else the name rules (canonical_gpu_model); sources/prices/_gpus.py applies the same rules. #}}

{{# GPU model named in free text (benchmark files, own CSVs: "NVIDIA A100-SXM4-40GB") -> canonical
   gpu_catalog id, or null when no catalogued GPU is named. GPU_NAME_RULES: first match wins. #}}
{{% macro canonical_gpu_model(expr) -%}}
    {{%- set rules = [
{rules}
    ] -%}}
    case
    {{%- for pattern, model in rules %}}
        when {{{{ gpu_ledger.regex_search("upper(replace(" ~ expr ~ ", '_', ' '))", "'" ~ pattern ~ "'") }}}} then '{{{{ model }}}}'
    {{%- endfor %}}
    end
{{%- endmacro %}}

{{# The one join to the gpu_aliases seed, on the one key: the name trimmed and lower-cased (the seed's
   aliases are stored that way). Use the joined relation's gpu_model (null when the name is no alias):
       coalesce(aliases.gpu_model, {{{{ canonical_gpu_model('t.name') }}}})
       ... from t {{{{ join_gpu_alias('t.name') }}}}
   `relation_alias` names the joined seed when a model joins it twice. #}}
{{% macro join_gpu_alias(expr, relation_alias='aliases') -%}}
    left join {{{{ ref('gpu_aliases') }}}} as {{{{ relation_alias }}}} on {{{{ relation_alias }}}}.alias = lower(trim({{{{ expr }}}}))
{{%- endmacro %}}
"""


def render_billing_defaults_sql() -> str:
    bounds = ", ".join(f"'{k}': {v}" for k, v in PLAUSIBILITY.items())
    units = " ".join(f"when '{c}' then {n}" for c, n in UNITS_PER_USD_CEILING.items())
    return f"""{{# {HEADER} ({_REGENERATE}).
   PLAUSIBILITY bounds (USD), UNITS_PER_USD_CEILING and DEFAULT_TAG_KEYS: docs/sources/billing.md. #}}
{{% macro plausibility(name) %}}{{{{ return({{{bounds}}}[name]) }}}}{{% endmacro %}}
{{% macro units_per_usd_ceiling(expr) %}}case {{{{ expr }}}} {units} else {UNITS_PER_USD_DEFAULT} end{{% endmacro %}}
""" + _tags.render_tag_macros()


def render_gpu_aliases_csv() -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("alias", "gpu_model", "note"))
    writer.writerows(GPU_ALIASES)
    return out.getvalue()


#: Generated file (relative to the repository root) -> its renderer.
GENERATED: dict[str, Callable[[], str]] = {
    "dbt/macros/known_currencies.sql": render_known_currencies_sql,
    "dbt/macros/canonical_gpu_model.sql": render_gpu_macros_sql,
    "dbt/seeds/gpu_aliases.csv": render_gpu_aliases_csv,
    "dbt/macros/billing_defaults.sql": render_billing_defaults_sql,
    "dbt/seeds/mig_profiles.csv": _mig.render_mig_profiles_csv,
    "dbt/seeds/instance_gpu_map.csv": _instances.render_instance_gpu_map_csv,
}


def stale_files(root: Path = REPO) -> list[str]:
    """Generated files whose content on disk differs from what this module renders now."""
    stale = []
    for rel, render in GENERATED.items():
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != render():
            stale.append(rel)
    return stale


def write_generated(root: Path = REPO) -> list[str]:
    """(Re)write every generated file; returns those whose content changed."""
    changed = stale_files(root)
    for rel in changed:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(GENERATED[rel](), encoding="utf-8", newline="\n")
    return changed


def _check_lists() -> None:
    """Invariants of the lists themselves (run by the generator and by tests/test_reference.py)."""
    assert list(ISO_4217_CODES) == sorted(set(ISO_4217_CODES)), "ISO_4217_CODES: sorted, no duplicates"
    assert all(re.fullmatch(r"[A-Z]{3}", c) for c in CURRENCIES)
    assert set(UNITS_PER_USD_CEILING) <= ISO_4217_SET, "UNITS_PER_USD_CEILING: ISO 4217 codes only"
    aliases = [a for a, _m, _n in GPU_ALIASES]
    assert len(aliases) == len(set(aliases)), "GPU_ALIASES: an alias appears twice"
    bad = [a for a in aliases if a != gpu_alias_key(a) or not a]
    assert not bad, f"GPU_ALIASES must be written as their join key (trimmed, lower case): {bad}"
    _mig.check_mig_profiles()  # unique (gpu_model, profile), slices within 1..per GPU, a source per row
    _instances.check_instance_types()  # unique (provider, sku), known sku_kind, a count or a note
    _tags.check_tag_keys()  # built-in keys written in their normalised form


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    _check_lists()
    if args == ["--write"]:
        changed = write_generated()
        print("\n".join(f"wrote {rel}" for rel in changed) or "generated files are up to date")
        return 0
    if args == ["--check"]:
        stale = stale_files()
        print("\n".join(f"stale: {rel}" for rel in stale) or "generated files are up to date")
        return 1 if stale else 0
    print("usage: python -m warehouse.reference --write | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
