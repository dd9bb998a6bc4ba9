"""Parser for registry YAML files: `teams:`, `workloads:`, `mappings:` and `policies:` sections.

Each workload carries the guide's Step 1 fields (docs/registry.md). A workload whose
required fields are missing still loads, marked `ready_to_compare = false` with the reasons, as
the guide says ("if these cannot be filled in, the workload is not ready to be compared").
A value outside a fixed vocabulary (e.g. a typo in the workload type) is a reject naming the
file, line and field.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile, head_text
from sources.registry.yaml_lines import LineMap, line_of, load_yaml

WORKLOAD_TYPES = (
    "pre-training", "full fine-tune", "lora fine-tune", "batch inference", "real-time inference",
    "embedding", "image generation", "video generation", "evaluation", "coding agent", "notebook",
)
UNITS_OF_SUCCESS = (
    "completed training run", "accepted checkpoint", "accepted response", "accepted token",
    "accepted record", "accepted patch", "accepted task", "accepted image", "accepted clip",
    "accepted second", "completed eval suite", "accepted embedding batch", "notebook hour",
)
OPERATING_MODES = ("always-on", "scheduled batch", "seasonal burst", "experiment", "developer notebook")
MAPPING_KINDS = ("tag_value", "subaccount", "slurm_account", "namespace", "api_team", "project", "host")
# Step 1 fields a workload needs before it can be compared (the guide's readiness rule).
REQUIRED_FIELDS = ("team", "type", "unit_of_success", "latency_target", "operating_mode", "boundary", "model")
SECTIONS = ("teams", "workloads", "mappings", "policies")


def _detect(path: Path, head: bytes) -> bool:
    text = head_text(head)
    return any(line.split(":", 1)[0].strip() in SECTIONS and not line.startswith((" ", "-", "#"))
               for line in text.splitlines() if ":" in line)


def _enum(value: Any, allowed: tuple[str, ...], field: str, line: int | None, rejects: list[Reject]) -> str | None:
    if value is None:
        return None
    norm = str(value).strip().lower()
    if norm in allowed:
        return norm
    hint = difflib.get_close_matches(norm, allowed, n=1)
    rejects.append(Reject(line, f"invalid_{field}", f"{field} {value!r} is not one of {list(allowed)}"
                          + (f"; did you mean {hint[0]!r}?" if hint else ""), field, str(value)))
    return "__invalid__"


def _num(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _teams(items: list[Any], rejects: list[Reject]) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        line = line_of(item)
        if not isinstance(item, dict) or not item.get("id"):
            rejects.append(Reject(line, "missing_field", "team entry has no id", "id"))
            continue
        budget = item.get("budget") or {}
        rows.append({
            "team_id": str(item["id"]).strip(),
            "name": item.get("name") or str(item["id"]),
            "cost_center": item.get("cost_center"),
            "owner": item.get("owner"),
            "budget_monthly": None if budget.get("monthly") is None else str(budget.get("monthly")),
            "budget_currency": (budget.get("currency") or "USD").upper() if budget else None,
            "aliases": json.dumps(sorted(str(a) for a in item.get("aliases", []) or [])),
            "_source_line": line,
        })
    return rows


def _slo(latency: dict[str, Any], key: str) -> float | None:
    return _num((latency or {}).get(key))


def _workloads(items: list[Any], rejects: list[Reject]) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        line = line_of(item)
        if not isinstance(item, dict) or not item.get("id"):
            rejects.append(Reject(line, "missing_field", "workload entry has no id", "id"))
            continue
        wid = str(item["id"]).strip()
        bad: list[Reject] = []
        wtype = _enum(item.get("type"), WORKLOAD_TYPES, "workload_type", line_of(item, "type"), bad)
        unit = _enum(item.get("unit_of_success"), UNITS_OF_SUCCESS, "unit_of_success",
                     line_of(item, "unit_of_success"), bad)
        mode = _enum(item.get("operating_mode"), OPERATING_MODES, "operating_mode",
                     line_of(item, "operating_mode"), bad)
        if bad:
            # a vocabulary error makes the entry untrustworthy: quarantined, named, not guessed (the message
            # names the workload: warehouse/registry_check.py stops the refresh when loaded rows use it)
            rejects.extend(replace(r, message=f"workload {wid!r}: {r.message}") for r in bad)
            continue
        missing = [f for f in REQUIRED_FIELDS if item.get(f) in (None, "", [], {})]
        model = item.get("model") or {}
        req = item.get("request_shape") or {}
        lat = item.get("latency_target") or {}
        if not isinstance(lat, dict):
            lat = {"class": lat}
        rows.append({
            "workload_id": wid,
            "name": item.get("name") or wid,
            "team_id": None if item.get("team") is None else str(item["team"]).strip(),
            "workload_type": wtype,
            "unit_of_success": unit,
            "operating_mode": mode,
            "operating_boundary": item.get("boundary"),
            "latency_class": lat.get("class"),
            "slo_percentile": str(lat.get("percentile", "p95")),
            "slo_ttft_ms": _slo(lat, "ttft_ms"),
            "slo_tpot_ms": _slo(lat, "tpot_ms"),
            "slo_e2el_ms": _slo(lat, "e2el_ms"),
            "model_name": model.get("name"),
            "model_params_b": _num(model.get("params_b")),
            "model_layers": _num(model.get("layers")),
            "model_kv_heads": _num(model.get("kv_heads")),
            "model_head_dim": _num(model.get("head_dim")),
            "precision": model.get("precision"),
            "quantisation": model.get("quantisation"),
            "context_window": _num(model.get("context_window")),
            "modality": model.get("modality"),
            "mean_input_tokens": _num(req.get("mean_input_tokens")),
            "p95_input_tokens": _num(req.get("p95_input_tokens")),
            "mean_output_tokens": _num(req.get("mean_output_tokens")),
            "concurrency": _num(req.get("concurrent_sessions")),
            "tools": json.dumps(item.get("tools") or []),
            "acceptance": json.dumps(item.get("acceptance") or {}),
            "benchmark_match": json.dumps(item.get("benchmarks") or {}),
            "assumptions": json.dumps(item.get("assumptions") or {}),
            "ready_to_compare": not missing,
            "not_ready_reasons": ", ".join(f"missing {f}" for f in missing) or None,
            "_source_line": line,
        })
    return rows


def _mappings(items: list[Any], rejects: list[Reject]) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        line = line_of(item)
        kind = _enum((item or {}).get("kind"), MAPPING_KINDS, "mapping_kind", line, rejects)
        # A host mapping names one machine two ways (telemetry's Hostname vs the scheduler's node name):
        # it needs the node it means, not a team.
        target = "host" if kind == "host" else None
        if kind in (None, "__invalid__") or not item.get("match") or not (
                item.get(target) if target else (item.get("team") or item.get("workload"))):
            if kind is None or (kind != "__invalid__"):
                need = "kind, match and host" if target else "kind, match and team or workload"
                rejects.append(Reject(line, "missing_field", f"mapping needs {need}"))
            continue
        rows.append({
            "kind": kind,
            "match_value": str(item["match"]).strip().lower(),
            "team_id": item.get("team"),
            "workload_id": item.get("workload"),
            "target_host": str(item["host"]).strip() if target else None,
            "_source_line": line,
        })
    return rows


# Policies whose values the models cast to numbers: the scalar itself (None), the listed keys of a mapping, or
# every value of a mapping ("*"). A value that is not a number (`observability_share: 3%`) made a model fail
# and withheld every source; it is an invalid_policy reject with its line now, and the default applies.
NUMERIC_POLICIES: dict[str, tuple[str, ...] | None] = {
    "observability_share": None, "serving_target_utilisation": None, "fx_lookback_days": None,
    "platform_labor_monthly": ("amount",), "operator_hourly_rate": ("amount",), "moderation_cost_per_asset": ("amount",),
    "pricing_category_factors": ("*",), "decisions": ("*",),
    "owned_hardware": ("amortisation_months", "electricity_per_kwh", "pue", "ops_per_gpu_month", "ops_per_gpu_hour",
                       "capex_per_gpu.*", "power_kw_per_gpu.*"),
}


# Cast to an integer by their model (fct_fx_rates_daily): 4.5 would silently become 5 days.
WHOLE_NUMBER_POLICIES = frozenset({"fx_lookback_days"})


def _is_number(value: Any) -> bool:
    """A finite number, or text of one (YAML reads `.nan` and `.inf` as floats: neither is a policy value)."""
    if isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value if isinstance(value, (int, float)) else str(value).strip()))
    except (ValueError, OverflowError):
        return False


def _numeric_policy(name: str, value: Any, line: int | None, rejects: list[Reject]) -> tuple[bool, Any]:
    """(keep, value): a number-valued policy with every non-number taken out and named as invalid_policy."""
    def bad(where: str, got: Any, at: int | None) -> None:
        what = "a whole number" if where in WHOLE_NUMBER_POLICIES else "a number"
        rejects.append(Reject(at or line, "invalid_policy", f"policy {where} = {got!r} is not {what}; "
                              "the default applies", where, str(got)[:200]))

    spec = NUMERIC_POLICIES[name]
    if spec is None:
        whole = name not in WHOLE_NUMBER_POLICIES or (_is_number(value) and float(value) == int(float(value)))
        if value is not None and not (_is_number(value) and whole):
            bad(name, value, line)
            return False, value
        return True, value
    if not isinstance(value, dict):
        return True, value
    kept = dict(value)
    for key in spec:
        if key == "*":  # every value of the mapping
            for k, v in value.items():
                if v is not None and not isinstance(v, (dict, list)) and not _is_number(v):
                    bad(f"{name}.{k}", v, line_of(value, str(k)))
                    kept.pop(k)
        elif key.endswith(".*"):  # every value of a sub-mapping (a price per GPU model)
            sub = key[:-2]
            inner = value.get(sub)
            if isinstance(inner, dict):
                for k, v in inner.items():
                    if v is not None and not _is_number(v):
                        bad(f"{name}.{sub}.{k}", v, line_of(inner, str(k)))
                kept[sub] = {k: v for k, v in inner.items() if v is None or _is_number(v)}
        elif value.get(key) is not None and not _is_number(value[key]):
            bad(f"{name}.{key}", value[key], line_of(value, key))
            kept.pop(key)
    return True, kept


def _time_slicing(entries: Any, line: int | None, rejects: list[Reject]) -> list[dict[str, Any]]:
    """The valid entries of policy gpu_time_slicing: a `match` (a pattern or a list of them) and a whole
    number of `replicas` >= 1; any other entry is an `invalid_policy` reject and is not applied."""
    kept: list[dict[str, Any]] = []
    for i, entry in enumerate(entries if isinstance(entries, list) else [entries]):
        where = line_of(entry, "replicas") or line if isinstance(entry, dict) else line
        match = entry.get("match") if isinstance(entry, dict) else None
        patterns = [match] if isinstance(match, str) else match if isinstance(match, list) else []
        patterns = [str(m).strip() for m in patterns if m is not None and str(m).strip()]
        replicas = entry.get("replicas") if isinstance(entry, dict) else None
        if not patterns or isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
            rejects.append(Reject(where, "invalid_policy", f"gpu_time_slicing entry {i + 1} needs match (a pattern "
                                  f"or a list) and replicas (a whole number >= 1): {entry!r}", "gpu_time_slicing",
                                  str(entry)[:200]))
            continue
        kept.append({**entry, "match": patterns, "replicas": replicas})
    return kept


def _policies(doc: Any, rejects: list[Reject]) -> list[dict[str, Any]]:
    if not isinstance(doc, dict):
        return []
    rows = []
    for k, v in doc.items():
        line = line_of(doc, str(k))
        if str(k) == "gpu_time_slicing":
            v = _time_slicing(v, line, rejects)
        elif str(k) in NUMERIC_POLICIES:
            keep, v = _numeric_policy(str(k), v, line, rejects)
            if not keep:
                continue
        rows.append({"policy": str(k), "value": json.dumps(v), "_source_line": line})
    return rows


def parse(path: Path) -> ParseOutput:
    """Read one registry YAML file into registry_* raw tables, with rejects naming line and field."""
    doc = load_yaml(path)
    if not isinstance(doc, dict) or not any(k in doc for k in SECTIONS):
        raise UnreadableFile(path, 1, f"a registry file needs at least one of the sections {list(SECTIONS)}")
    out = ParseOutput()
    builders = {"teams": _teams, "workloads": _workloads, "mappings": _mappings}
    for section, build in builders.items():
        items = doc.get(section)
        if items is None:
            continue
        if not isinstance(items, list):
            raise UnreadableFile(path, line_of(doc, section), f"section {section!r} must be a list")
        rows = build(items, out.rejects)
        if rows:
            out.tables[f"registry_{section}"] = pa.Table.from_pylist(rows)
    policies = _policies(doc.get("policies"), out.rejects)
    if policies:
        out.tables["registry_policies"] = pa.Table.from_pylist(policies)
    _ = LineMap
    return out


FORMATS = [SourceFormat("registry_yaml", "registry", _detect, parse,
                        "Workload registry YAML (teams, workloads, mappings, policies)")]
