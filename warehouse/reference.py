"""The dbt files generated from the shared reference facts (the `reference` package), and the
names `warehouse` code reads from them, re-exported.

The facts themselves live one floor down, in the `reference` package (stdlib only, imported by
`sources/` and `warehouse/` alike). Everything the dbt project needs from them is generated into
it, each file headed "generated from warehouse/reference.py; do not edit":

- dbt/macros/known_currencies.sql   `known_currencies()`, which column_constraints' `currency_is_known` check reads;
- dbt/macros/canonical_gpu_model.sql `canonical_gpu_model(expr)` (the GPU name rules) and
                                      `join_gpu_alias(expr)` (the one join to the alias seed);
- dbt/seeds/gpu_aliases.csv          the alias list (CSV has no comments: dbt/seeds/README.md
                                      says it is generated).
- dbt/seeds/mig_profiles.csv         MIG_PROFILES, the MIG profile table (reference/mig.py).
- dbt/seeds/instance_gpu_map.csv     INSTANCE_TYPES, the instance catalogue (reference/instances.py).
- dbt/macros/billing_defaults.sql    plausibility bounds (reference/bounds.py); tag keys and
                                      tag_key_norm (reference/tags.py).

Regenerate after editing a reference module:  .venv/bin/python -m warehouse.reference --write
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

from reference import (  # noqa: F401 - re-exported for warehouse code and the tests
    CURRENCIES,
    CURRENCY_SET,
    DEFAULT_TAG_KEYS,
    FOCUS_ENUMS,
    GPU_ALIAS_MAP,
    GPU_ALIASES,
    GPU_NAME_RULES,
    INSTANCE_TYPES,
    ISO_4217_CODES,
    ISO_4217_SET,
    MIG_COLUMNS,
    MIG_PROFILES,
    NO_CURRENCY,
    PLAUSIBILITY,
    UNITS_PER_USD_CEILING,
    UNITS_PER_USD_DEFAULT,
    InstanceType,
    MigProfile,
    find_instance,
    gpu_alias_key,
    gpu_model_from_name,
    gpu_model_of,
    gpu_name_text,
    instance_of,
    mig_fraction,
    tag_key_norm,
    units_per_usd_case,
)
from reference import instances as _instances
from reference import mig as _mig
from reference import tags as _tags

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
    units = units_per_usd_case("{{ expr }}")
    return f"""{{# {HEADER} ({_REGENERATE}).
   PLAUSIBILITY bounds (USD), UNITS_PER_USD_CEILING and DEFAULT_TAG_KEYS: docs/sources/billing.md. #}}
{{% macro plausibility(name) %}}{{{{ return({{{bounds}}}[name]) }}}}{{% endmacro %}}
{{% macro units_per_usd_ceiling(expr) %}}{units}{{% endmacro %}}
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
