"""MIG profiles per GPU model: the reference table behind the dbt seed `mig_profiles` and `mig_fraction`.

Part of the shared reference lists (docs/reference.md, "MIG profiles"): `warehouse.reference` re-exports
the table and `mig_fraction` and generates dbt/seeds/mig_profiles.csv from `MIG_PROFILES`. It lives in its own
module only because warehouse/reference.py is at the 400-line limit of a product module; the same rules
hold: pure data, standard library only, nothing imported from the project.

One row per (gpu_model, profile). A profile name is written as nvidia-smi, Slurm gres and the Kubernetes
device plugin write it, lower case (`3g.40gb`, `1g.18gb+me`). `compute_slices` is the n of `<n>g`, of
`compute_slices_per_gpu` (7); `memory_slices` is what the profile's placements take of the GPU's
`memory_slices_per_gpu` (8): the `:N` of `nvidia-smi mig -lgipp`. `memory_gib` and `sm_count` are what
`nvidia-smi mig -lgip` reports, None where no source confirms them: memory GiB moves by a fraction of
a GiB between driver versions, so it is only filled where one source stands for it (`source` says which).
"""

from __future__ import annotations

import csv
import io
import re
from typing import NamedTuple


class MigProfile(NamedTuple):
    gpu_model: str
    profile: str
    compute_slices: int
    compute_slices_per_gpu: int
    memory_slices: int
    memory_slices_per_gpu: int
    memory_gib: float | None
    sm_count: int | None
    max_instances: int
    source: str


MIG_COLUMNS: tuple[str, ...] = MigProfile._fields

# Every GPU below is cut into 7 compute slices and 8 memory slices (NVIDIA MIG User Guide,
# "Concepts": an SM slice is about 1/7 of the SMs, a memory slice 1/8 of the memory).
_SLICES_PER_GPU = (7, 8)

_GUIDE = "NVIDIA MIG User Guide r580, Supported MIG Profiles"
_NOT_CONFIRMED = "memory_gib and sm_count not confirmed"

#: gpu_model -> (source, rows of
#: (profile, compute_slices, memory_slices, memory_gib, sm_count, max_instances)).
_MIG_TABLE: dict[str, tuple[str, tuple[tuple[str, int, int, float | None, int | None, int], ...]]] = {
    "H200-SXM-141GB": (
        ("nvidia-smi mig -lgip and -lgipp on an H200 SXM, driver 580.159.04 "
         "(tests/data/public/usage/h200_capture)"), (
            ("1g.18gb", 1, 1, 16.00, 16, 7),
            ("1g.18gb+me", 1, 1, 16.00, 16, 1),
            ("1g.35gb", 1, 2, 32.50, 26, 4),
            ("2g.35gb", 2, 2, 32.50, 32, 3),
            ("3g.71gb", 3, 4, 69.75, 60, 2),
            ("4g.71gb", 4, 4, 69.75, 64, 1),
            ("7g.141gb", 7, 8, 140.00, 132, 1),
        )),
    "A100-40GB": (
        (f"{_GUIDE}, A100 table; memory_gib, sm_count and memory slices from the guide's "
         "nvidia-smi mig -lgip and -lgipp example on an A100-SXM4-40GB"), (
            ("1g.5gb", 1, 1, 4.75, 14, 7),
            ("1g.5gb+me", 1, 1, 4.75, 14, 1),
            ("1g.10gb", 1, 2, 9.62, 14, 4),
            ("2g.10gb", 2, 2, 9.62, 28, 3),
            ("3g.20gb", 3, 4, 19.50, 42, 2),
            ("4g.20gb", 4, 4, 19.50, 56, 1),
            ("7g.40gb", 7, 8, 39.25, 98, 1),
        )),
    "A100-80GB": (
        f"{_GUIDE}, A100 table (the 80GB names); {_NOT_CONFIRMED}", (
            ("1g.10gb", 1, 1, None, None, 7),
            ("1g.10gb+me", 1, 1, None, None, 1),
            ("1g.20gb", 1, 2, None, None, 4),
            ("2g.20gb", 2, 2, None, None, 3),
            ("3g.40gb", 3, 4, None, None, 2),
            ("4g.40gb", 4, 4, None, None, 1),
            ("7g.80gb", 7, 8, None, None, 1),
        )),
    "H100-SXM-80GB": (
        (f"{_GUIDE}, H100 table; memory_gib and sm_count from a public nvidia-smi mig -lgip of an "
         "H100 80GB HBM3 (jbarrow.ai/field_notes/nvidia-mig)"), (
            ("1g.10gb", 1, 1, 9.75, 16, 7),
            ("1g.10gb+me", 1, 1, 9.75, 16, 1),
            ("1g.20gb", 1, 2, 19.62, 26, 4),
            ("2g.20gb", 2, 2, 19.62, 32, 3),
            ("3g.40gb", 3, 4, 39.50, 60, 2),
            ("4g.40gb", 4, 4, 39.50, 64, 1),
            ("7g.80gb", 7, 8, 79.25, 132, 1),
        )),
    "H100-PCIe-80GB": (
        f"{_GUIDE}, H100 table (H100 80GB, SXM5 and PCIe); {_NOT_CONFIRMED}", (
            ("1g.10gb", 1, 1, None, None, 7),
            ("1g.10gb+me", 1, 1, None, None, 1),
            ("1g.20gb", 1, 2, None, None, 4),
            ("2g.20gb", 2, 2, None, None, 3),
            ("3g.40gb", 3, 4, None, None, 2),
            ("4g.40gb", 4, 4, None, None, 1),
            ("7g.80gb", 7, 8, None, None, 1),
        )),
    "H100-NVL-94GB": (
        ("public nvidia-smi mig -lgip and -lgipp of an H100 NVL (OpenNebula docs, NVIDIA vGPU & MIG); "
         "memory_gib not confirmed (public captures differ by driver)"), (
            ("1g.12gb", 1, 1, None, 16, 7),
            ("1g.12gb+me", 1, 1, None, 16, 1),
            ("1g.24gb", 1, 2, None, 26, 4),
            ("2g.24gb", 2, 2, None, 32, 3),
            ("3g.47gb", 3, 4, None, 60, 2),
            ("4g.47gb", 4, 4, None, 64, 1),
            ("7g.94gb", 7, 8, None, 132, 1),
        )),
    "GH200-96GB": (
        ("public nvidia-smi mig -lgip of a GH200 "
         "(github.com/kf-cuanschutz/NVIDIA_Grace_Hopper_benchmarking_logs_); "
         "memory_gib not confirmed (one capture, driver unknown)"), (
            ("1g.12gb", 1, 1, None, 16, 7),
            ("1g.12gb+me", 1, 1, None, 16, 1),
            ("1g.24gb", 1, 2, None, 26, 4),
            ("2g.24gb", 2, 2, None, 32, 3),
            ("3g.48gb", 3, 4, None, 60, 2),
            ("4g.48gb", 4, 4, None, 64, 1),
            ("7g.96gb", 7, 8, None, 132, 1),
        )),
    "B200-180GB": (
        f"{_GUIDE}, B200 table; {_NOT_CONFIRMED}", (
            ("1g.23gb", 1, 1, None, None, 7),
            ("1g.23gb+me", 1, 1, None, None, 1),
            ("1g.45gb", 1, 2, None, None, 4),
            ("2g.45gb", 2, 2, None, None, 3),
            ("3g.90gb", 3, 4, None, None, 2),
            ("4g.90gb", 4, 4, None, None, 1),
            ("7g.180gb", 7, 8, None, None, 1),
        )),
}

#: The table, one MigProfile per (gpu_model, profile), in the order above.
MIG_PROFILES: tuple[MigProfile, ...] = tuple(
    MigProfile(model, profile, compute, _SLICES_PER_GPU[0], memory, _SLICES_PER_GPU[1], gib, sms, top, source)
    for model, (source, rows) in _MIG_TABLE.items()
    for profile, compute, memory, gib, sms, top in rows
)

_BY_KEY: dict[tuple[str, str], MigProfile] = {(p.gpu_model, p.profile): p for p in MIG_PROFILES}

# A GPU-instance profile name: `<n>g.<m>gb`, optionally with a media/graphics suffix (`+me`, `-me`,
# `+gfx`, `+me.all`). nvidia-smi prefixes `MIG `, the device plugin's resource `mig-`: both are dropped.
# A Kubernetes resource name cannot hold `+`, so the device plugin writes `1g.10gb+me` as `1g.10gb.me`;
# that spelling is read as `+me` (`-me`, which RTX PRO parts use for "no media engines", stays apart).
_PROFILE_NAME = re.compile(r"([1-7])g\.\d+gb(?:[+.-][a-z.]+)?")
_PREFIX = re.compile(r"^(?:nvidia\.com/)?mig[- ]+")


def mig_profile_name(name: str | None) -> str | None:
    """The profile as the table writes it (`MIG 1g.10gb` -> `1g.10gb`), None when it names no MIG profile."""
    if not name:
        return None
    text = re.sub(r"gb\.me$", "gb+me", _PREFIX.sub("", name.strip().lower()))
    return text if _PROFILE_NAME.fullmatch(text) else None


def mig_fraction(profile: str, gpu_model: str | None, rule: str = "compute") -> float | None:
    """The share of one physical GPU a MIG instance of `profile` on `gpu_model` (a gpu_catalog id) is.

    rule "compute": compute_slices / compute_slices_per_gpu (1g = 1/7); rule "memory" (registry policy
    `mig_fraction_rule: memory`): memory_slices / memory_slices_per_gpu (1g.35gb = 2/8). A profile the
    table lacks for the model (or an unknown model) counts its `<n>g` as n compute slices of 7 under
    either rule, as dbt's int_gpu_jobs_attributed does. None when `profile` names no MIG profile.
    """
    if rule not in ("compute", "memory"):
        raise ValueError(f"mig_fraction rule must be 'compute' or 'memory', not {rule!r}")
    name = mig_profile_name(profile)
    if name is None:
        return None
    row = _BY_KEY.get((gpu_model or "", name))
    if row is None:
        return int(name.split("g.", 1)[0]) / _SLICES_PER_GPU[0]
    if rule == "memory":
        return row.memory_slices / row.memory_slices_per_gpu
    return row.compute_slices / row.compute_slices_per_gpu


def render_mig_profiles_csv() -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(MIG_COLUMNS)
    for row in MIG_PROFILES:
        gib = "" if row.memory_gib is None else f"{row.memory_gib:.2f}"
        sms = "" if row.sm_count is None else row.sm_count
        writer.writerow((*row[:6], gib, sms, row.max_instances, row.source))
    return out.getvalue()


def check_mig_profiles() -> None:
    """Invariants of MIG_PROFILES (run by reference._check_lists)."""
    keys = [(p.gpu_model, p.profile) for p in MIG_PROFILES]
    assert len(keys) == len(set(keys)), "MIG_PROFILES: a (gpu_model, profile) appears twice"
    for p in MIG_PROFILES:
        assert mig_profile_name(p.profile) == p.profile, f"MIG_PROFILES: {p.profile}: not a lower-case name"
        assert p.profile.startswith(f"{p.compute_slices}g."), f"MIG_PROFILES: {p.profile}: compute slices"
        assert 1 <= p.compute_slices <= p.compute_slices_per_gpu, f"MIG_PROFILES: compute slices of {p}"
        assert 1 <= p.memory_slices <= p.memory_slices_per_gpu, f"MIG_PROFILES: memory slices of {p}"
        assert p.max_instances >= 1 and p.max_instances * p.compute_slices <= p.compute_slices_per_gpu, p
        assert p.max_instances * p.memory_slices <= p.memory_slices_per_gpu, p
        assert p.source, f"MIG_PROFILES: {p.gpu_model} {p.profile} names no source"
