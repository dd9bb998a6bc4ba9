"""Recognise a GPU model named in free text (SKU descriptions, product names) -> canonical id.

Canonical ids are the `gpu_model` keys of dbt/seeds/gpu_catalog.csv. Where a name leaves the
memory or form factor open, the rule picks the configuration clouds rent by default
(H100 -> SXM 80GB, V100 -> 16GB, A100 -> 40GB unless 80GB is stated); provider-specific
exceptions (OCI "A100 - v2" is the 80GB part) are handled in that provider's parser, and the
per-SKU seed dbt/seeds/instance_gpu_map.csv has the final word.
"""

from __future__ import annotations

import re

# Order matters: longer / more specific names first (L40S before L40 before L4, A100 before A10).
_RULES: list[tuple[str, str]] = [
    (r"GB200", "GB200"),
    (r"B300", "B300-288GB"),
    (r"B200", "B200-180GB"),
    (r"GH200", "GH200-96GB"),
    (r"H200", "H200-SXM-141GB"),
    (r"H100\W*NVL", "H100-NVL-94GB"),
    (r"H100\W*PCIE", "H100-PCIe-80GB"),
    (r"H100", "H100-SXM-80GB"),
    (r"A100\W*(?:SXM4?\W*)?80", "A100-80GB"),
    (r"A100", "A100-40GB"),
    (r"L40S", "L40S-48GB"),
    (r"L40(?!\d)", "L40-48GB"),
    (r"(?<![A-Z0-9])L4(?!\d)", "L4-24GB"),
    (r"A10G", "A10G-24GB"),
    (r"(?<![A-Z0-9])A10(?![0-9G])", "A10-24GB"),
    (r"T4G", "T4G-16GB"),
    (r"(?<![A-Z0-9])T4(?![0-9])", "T4-16GB"),
    (r"V100\W*32", "V100-32GB"),
    (r"V100", "V100-16GB"),
    (r"P100", "P100-16GB"),
    (r"(?<![A-Z0-9])P40(?!\d)", "P40-24GB"),
    (r"(?<![A-Z0-9])P4(?!\d)", "P4-8GB"),
    (r"K80", "K80-12GB"),
    (r"M60", "M60-8GB"),
    (r"RTX\W*PRO\W*6000", "RTX-PRO-6000-96GB"),
    (r"RTXPRO6000", "RTX-PRO-6000-96GB"),
    (r"(?:RTX\W*)?A6000", "RTX-A6000-48GB"),
    (r"4090", "RTX-4090-24GB"),
    (r"5090", "RTX-5090-32GB"),
    (r"MI300X", "MI300X-192GB"),
]
_COMPILED = [(re.compile(p), m) for p, m in _RULES]


def gpu_model_from_text(text: str | None) -> str | None:
    """Canonical GPU id named in `text`, or None when no known GPU is named."""
    if not text:
        return None
    up = text.upper().replace("_", " ")
    for pattern, model in _COMPILED:
        if pattern.search(up):
            return model
    return None
