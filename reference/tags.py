"""Tag keys: the built-in keys per allocation dimension and THE key normalisation (pure data + rules).

Split out of warehouse/reference.py (module size limit); reference.py re-exports DEFAULT_TAG_KEYS and
generates the dbt macros below into dbt/macros/billing_defaults.sql.

Providers spell one key many ways: AWS and Azure exports write `CostCenter`, GCP labels `cost-center`,
people `Cost Center`, `costCenter` or `COST_CENTER`. All of them must land on one key, or half of a
multi-cloud bill loses its team without a word. The rule, in this order:

1. trim, and drop AWS's `user:` (CUR and Cost Explorer name every user-defined cost allocation tag
   `user:<key>`: `resourceTags/user:team` is the tag `team`; AWS-generated `aws:` keys stay as they are);
2. split an acronym from the word after it (`GPUTeam` -> `GPU_Team`);
3. split a lower-case letter or digit from the capital after it (`CostCenter` -> `Cost_Center`);
4. lower-case; every run of `-`, space or `_` becomes one `_`; `_` at either end is dropped.

A key already in snake case is unchanged. The dbt macro `tag_key_norm` renders the same rule for
each engine; tests/test_reference.py holds the Python and SQL versions to the same examples.
"""

from __future__ import annotations

import re

#: Built-in tag keys per allocation dimension, first present wins (docs/registry.md); the registry's
#: `policies.tag_keys.<dimension>` replaces one dimension's list and may spell keys any way (they are
#: normalised like the bill's keys).
DEFAULT_TAG_KEYS: dict[str, tuple[str, ...]] = {
    # then the spellings the rule cannot reach (British, and all-lower-case glued words, which GCP labels
    # allow only in lower case): the same keys, after every split one so their precedence is unchanged
    "team": ("team", "team_name", "owner_team", "business_unit", "cost_center",
             "cost_centre", "costcenter", "costcentre", "teamname", "ownerteam", "businessunit"),
    "workload": ("workload", "workload_id", "application", "app", "workloadid"),
    "environment": ("environment", "env"),
}

#: A normalised tag key that looks like it names an owner (team, owner, cost centre, business unit,
#: project, workload, application) but matches no configured key is listed with its cost in
#: fct_unmatched_tag_keys: such a key is almost always a spelling the registry does not know yet.
#: Whole words between `_` only, so `happy` or `teamwork` are not taken for `app` or `team`; the
#: glued forms (`costcenter`) are listed because the normaliser cannot split all-lower-case words.
OWNERSHIP_KEY_PATTERN = (
    r"(^|[_:./])(team|teams|owner|owners|owning|project|workload|workloads|app|apps|application|squad|tribe"
    r"|department|dept)([_:./]|$)|cost_?cent(er|re)|business_?unit|teamname|workloadid|ownerteam"
)

_AWS_USER_TAG = re.compile(r"(?i)^user:")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re.compile(r"[-_ ]+")


def tag_key_norm(key: str) -> str:
    """`CostCenter`, `cost-center`, `Cost Center`, `costCenter`, `COST_CENTER`, `user:CostCenter` -> `cost_center`."""
    text = _CAMEL.sub(r"\1_\2", _ACRONYM.sub(r"\1_\2", _AWS_USER_TAG.sub("", key.strip())))
    return _SEPARATORS.sub("_", text.lower()).strip("_")


def looks_like_ownership_key(normalised_key: str) -> bool:
    return re.search(OWNERSHIP_KEY_PATTERN, normalised_key) is not None


def check_tag_keys() -> None:
    """Built-in keys are written as their normalised form (the join key)."""
    bad = [k for keys in DEFAULT_TAG_KEYS.values() for k in keys if k != tag_key_norm(k)]
    assert not bad, f"DEFAULT_TAG_KEYS must be written normalised: {bad}"


def render_tag_macros() -> str:
    """dbt macros: default_tag_keys(), tag_key_norm(expr) per engine, ownership_key_pattern()."""
    keys = ", ".join(f"('{d}', '{k}', {i})" for d, ks in DEFAULT_TAG_KEYS.items() for i, k in enumerate(ks, 1))
    # The same steps as tag_key_norm above (RE2 and Java both read the inline (?i)). DuckDB replaces every
    # match only with the 'g' flag and numbers groups \1; Spark always replaces every match and numbers groups $1.
    steps = {"duckdb": ("'\\1_\\2', 'g'", "'_', 'g'", "'', 'g'"), "spark": ("'$1_$2'", "'_'", "''")}
    out = [f"{{% macro default_tag_keys() %}}(values {keys}) as default_tag_keys(dimension, tag_key, key_rank){{% endmacro %}}",
           "{% macro tag_key_norm(expr) %}{{ return(adapter.dispatch('tag_key_norm', 'gpu_ledger')(expr)) }}{% endmacro %}"]
    for engine, (split, sep, drop) in steps.items():
        inner = f"regexp_replace(regexp_replace(trim({{{{ expr }}}}), '(?i)^user:', ''), '([A-Z]+)([A-Z][a-z])', {split})"
        inner = f"regexp_replace({inner}, '([a-z0-9])([A-Z])', {split})"
        inner = f"regexp_replace(regexp_replace(lower({inner}), '[-_ ]+', {sep}), '^_|_$', {drop})"
        out.append(f"{{% macro {engine}__tag_key_norm(expr) %}}{inner}{{% endmacro %}}")
    out.append(f"{{% macro ownership_key_pattern() %}}'{OWNERSHIP_KEY_PATTERN}'{{% endmacro %}}")
    return "\n".join(out) + "\n"
