"""Recognise a GPU model named in free text (SKU descriptions, product names) -> canonical id.

Canonical ids are the `gpu_model` keys of dbt/seeds/gpu_catalog.csv. The name rules are written
once, in the `reference` package (GPU_NAME_RULES), from which warehouse/reference.py also generates dbt's
`canonical_gpu_model` macro from them, so a price parser and the dbt models read a name the same
way. Where a name leaves the memory or form factor open, the rule picks the configuration clouds
rent by default (H100 -> SXM 80GB, V100 -> 16GB, A100 -> 40GB unless 80GB is stated);
provider-specific exceptions (OCI "A100 - v2" is the 80GB part) are handled in that provider's
parser, and the per-SKU seed dbt/seeds/instance_gpu_map.csv has the final word. That seed is the
instance catalogue, generated from reference/instances.py, which the benchmark parsers
read too (reference.find_instance), so a price and a benchmark agree on a SKU's GPUs. The GPU alias
list (Slurm's bare `a100` and the like) is not applied here: its assumptions are about our
clusters, not about cloud SKUs.
"""

from __future__ import annotations

from reference import GPU_NAME_RULES, gpu_model_from_name

__all__ = ["GPU_NAME_RULES", "gpu_model_from_text"]


def gpu_model_from_text(text: str | None) -> str | None:
    """Canonical GPU id named in `text`, or None when no known GPU is named."""
    return gpu_model_from_name(text)
