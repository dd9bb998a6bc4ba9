"""The dbt project stays portable: engine-specific SQL lives only in the dispatched
macros of dbt/macros/portable/. This catches DuckDB-only syntax creeping back into a model, a
singular test or a shared macro, which would break the Spark lane."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

DBT = REPO / "dbt"

# DuckDB-only syntax and the portable macro to use instead.
DUCKDB_ONLY = {
    r"->>|\s->\s": "json_text / json_member / json_scalar_text",
    r"\bexclude\s*\(": "star_except",
    r"\*\s*replace\s*\(": "star_except + the new expression",
    r"\bunnest\s*\(": "explode_list / lateral_explode",
    r"\bgenerate_series\b|\bgenerate_subscripts\b|\brange\s*\(": "int_series / hour_series / explode_with_position",
    r"\blist_\w+\s*\(|\blist\s*\(|\blen\s*\(": "list_distinct / list_length / sorted_distinct_list",
    r"\bjson_extract\w*\s*\(|\bjson_each\s*\(|\bfrom_json\s*\(|::json": "json_* macros",
    r"\bregexp_matches\s*\(": "regex_search",
    r"\bepoch\w*\s*\(|\bdate_diff\s*\(|\bto_microseconds\s*\(|\bstrftime\s*\(": "epoch_us / hours_between / ts_text / add_seconds",
    r"\bunion\s+(all\s+)?by\s+name\b": "union_all_columns",
    r"\bquantile_cont\s*\(": "percentile_cont(p) within group (order by x)",
    r"\barg_max\s*\(|\barg_min\s*\(": "max_by / min_by",
    r"\bstring_split\s*\(": "split_text",
    r"\bvarchar\b": "string (both engines read it)",
    r"\bcolumns\s*\(": "a column list from adapter.get_columns_in_relation",
    r"\bends_with\s*\(|\bstarts_with\s*\(": "right()/left() comparisons",
    r"=\s*\[|\(\s*\[|,\s*\[\s*['0-9n]": "list_of",
}


def _sql_files() -> list[Path]:
    files = [*(DBT / "models").rglob("*.sql"), *(DBT / "tests").rglob("*.sql"), *(DBT / "macros").glob("*.sql")]
    return sorted(files)


def _code(text: str) -> str:
    """The SQL without comments (-- ... and {# ... #}; prose may name the DuckDB functions) and
    without Jinja (macro calls take Python lists; what they render is checked by the Spark lane)."""
    text = re.sub(r"\{#.*?#\}|\{\{.*?\}\}|\{%.*?%\}", " ", text, flags=re.DOTALL)
    code = "\n".join(line.split("--")[0] for line in text.splitlines())
    return re.sub(r"'[^'\n]*'", "''", code)  # string literals (regular expressions) are data


def test_no_duckdb_only_syntax_outside_the_portable_macros() -> None:
    offences = []
    for path in _sql_files():
        code = _code(path.read_text())
        for pattern, instead in DUCKDB_ONLY.items():
            for match in re.finditer(pattern, code, flags=re.IGNORECASE):
                line = code[: match.start()].count("\n") + 1
                offences.append(f"{path.relative_to(DBT)}:{line}: {match.group(0)!r} -> use {instead}")
    assert len(_sql_files()) > 90
    assert not offences, "\n".join(offences)


def test_the_lint_catches_what_it_names() -> None:
    """Each pattern matches the syntax it is meant to keep out (the test above is not vacuous)."""
    samples = ["x ->> 'a'", "t.* exclude (a)", "select * replace (1 as a)", "unnest(l)", "generate_series(1, 2)",
               "list_distinct(l)", "json_extract_string(j, '$')", "regexp_matches(a, 'b')", "epoch(ts)",
               "union all by name", "quantile_cont(x, 0.5)", "arg_max(a, b)", "string_split(a, ',')",
               "cast(a as varchar)", "count(columns(*))", "ends_with(a, 'b')", "in ([1, 2])"]
    assert _code("select regexp_extract(a, '([0-9]+)', 1) -- unnest(x)") == "select regexp_extract(a, '', 1) "
    for sample in samples:
        assert any(re.search(p, sample, flags=re.IGNORECASE) for p in DUCKDB_ONLY), sample


def test_every_portable_macro_has_both_engines() -> None:
    """A macro the project dispatches in its own namespace has a duckdb__ (or default__) and a spark__
    implementation (a dispatch into dbt's namespace, e.g. its relationships test, is dbt's to implement)."""
    text = "\n".join(p.read_text() for p in (DBT / "macros").rglob("*.sql"))
    dispatched = set(re.findall(r"adapter\.dispatch\('(\w+)',\s*'gpu_ledger'\)", text))
    assert len(dispatched) >= 20
    missing = [m for m in sorted(dispatched)
               if not (re.search(rf"macro (duckdb|default)__{m}\(", text) and re.search(rf"macro (spark|default)__{m}\(", text))]
    assert not missing, missing
