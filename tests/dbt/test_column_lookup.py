"""dbt's column lookup on DuckDB (macros/get_columns.sql) gives the columns dbt-duckdb's own lookup gives.

On a copy of the sample ledger, one `dbt compile --inline` looks up, through `adapter.get_columns_in_relation`
(the project's macro) and through dbt-duckdb's `dbt.duckdb__get_columns_in_relation`:
- every table and view of the ledger: the same columns in the same order, each with the same type, the
  same dbt data type and character size, and for a DECIMAL(p,s) the same precision and scale;
- a view whose table gained a column and changed a type after the view was created: the columns the view
  was created with, as dbt-duckdb gives them (the catalog's), not those of its table now;
- a temporary table named as an incremental model's (`<model>__dbt_tmp<stamp>`, no schema), created in the
  same session: the same columns;
- a relation that does not exist: no columns (dbt-duckdb's answer), not an error.
The tables dbt's cache holds and the temporary table are read with `pragma_table_info` (dbt's debug log
holds the statements), the views and the missing relation with dbt-duckdb's query.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dbt.ledger_nodes import copy_ledger, run_nodes

MARK = "-- LOOKUP "
TEMP = "probe_model__dbt_tmp20260101000000000000"
STALE_VIEW = ("create table main.probe_table (a integer, b varchar)",
              "create view main.probe_view as select * from main.probe_table",
              "alter table main.probe_table alter column a type bigint",
              "alter table main.probe_table add column c double")
# One line per relation: its name and kind, then the project's lookup and dbt-duckdb's, each column as
# [name, dtype, data_type, char_size, numeric_precision, numeric_scale].
INLINE = """
{%- if execute -%}
{%- set temp = 'TEMP_NAME' -%}
{%- set relations = [] -%}
{%- for statement in STALE_VIEW_SQL -%}{%- do run_query(statement) -%}{%- endfor -%}
{%- set kinds = {} -%}
{%- for row in run_query("select schema_name, table_name, 'table' from duckdb_tables() where database_name = 'ledger' "
                         "union all select schema_name, view_name, 'view' from duckdb_views() "
                         "where database_name = 'ledger' and not internal order by 1, 2").rows -%}
  {%- do relations.append(api.Relation.create(database='ledger', schema=row[0], identifier=row[1])) -%}
  {%- do kinds.update({row[1]: row[2]}) -%}
{%- endfor -%}
{%- do run_query("create temporary table " ~ temp ~ " (a varchar, b decimal(18, 6), c integer, d timestamp)") -%}
{%- do relations.append(api.Relation.create(identifier=temp)) -%}
{%- do relations.append(api.Relation.create(database='ledger', schema='marts', identifier='no_such_mart')) -%}
{%- for r in relations -%}
  {%- set both = [] -%}
  {%- for columns in [adapter.get_columns_in_relation(r), dbt.duckdb__get_columns_in_relation(r)] -%}
    {%- set out = [] -%}
    {%- for c in columns -%}
      {%- do out.append([c.column, c.dtype, c.data_type, c.char_size, c.numeric_precision, c.numeric_scale]) -%}
    {%- endfor -%}
    {%- do both.append(out) -%}
  {%- endfor %}
-- LOOKUP {{ tojson([r.identifier, kinds.get(r.identifier, 'temporary' if r.identifier == temp else 'missing')] + both) }}
{%- endfor %}
{%- endif %}
"""


@pytest.fixture(scope="module")
def lookups(sample_run: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, tuple[str, list, list]], str]:
    """{relation: (its kind, the project's columns, dbt-duckdb's columns)} and dbt's debug log."""
    assert sample_run["ok"], sample_run["reason"]
    base = tmp_path_factory.mktemp("column_lookup")
    ledger = copy_ledger(Path(sample_run["home"]), base / "home")
    inline = INLINE.replace("TEMP_NAME", TEMP).replace("STALE_VIEW_SQL", json.dumps(list(STALE_VIEW)))
    statuses, out = run_nodes(ledger, "compile", "--inline", inline, target=base / "target")
    assert set(statuses.values()) == {"success"}, out[-3000:]
    found = {}
    for line in out.splitlines():
        if line.startswith(MARK):
            name, kind, ours, theirs = json.loads(line[len(MARK):])
            found[name] = (kind, ours, theirs)
    return found, (base / "target" / "dbt.log").read_text()


def _comparable(columns: list[list]) -> list[list]:
    """What dbt reads of a column: name, type, data type, character size; precision and scale of a decimal."""
    return [[*c[:4], *(c[4:] if c[1].upper().startswith("DECIMAL(") else [None, None])] for c in columns]


def test_every_relation_of_the_ledger_has_the_columns_dbt_duckdb_gives(lookups) -> None:
    found, _ = lookups
    relations = [n for n in found if n not in (TEMP, "no_such_mart")]
    # the sample ledger's schemas: staging views, intermediate and marts tables, audit tables, seeds
    assert len(relations) > 100 and {"fct_chargeback_monthly", "stg_usage__gpu_samples"} <= set(relations)
    assert found["fct_chargeback_monthly"][0] == "table" and found["stg_usage__gpu_samples"][0] == "view"
    for name in relations:
        _, ours, theirs = found[name]
        assert theirs, name
        assert _comparable(ours) == _comparable(theirs), name
    decimals = [c for name in relations for c in found[name][1] if c[1].startswith("DECIMAL(")]
    assert decimals and all(c[2] == c[1] and c[4] is not None for c in decimals)


def test_a_new_temporary_table_and_a_missing_relation(lookups) -> None:
    found, _ = lookups
    _, ours, theirs = found[TEMP]
    assert [c[:2] for c in ours] == [["a", "VARCHAR"], ["b", "DECIMAL(18,6)"], ["c", "INTEGER"], ["d", "TIMESTAMP"]]
    assert _comparable(ours) == _comparable(theirs)
    assert ours[1][4:] == [18, 6]  # DECIMAL(18,6): precision 18, scale 6
    assert found["no_such_mart"] == ("missing", [], [])


def test_a_view_keeps_the_columns_it_was_created_with(lookups) -> None:
    found, _ = lookups
    kind, ours, theirs = found["probe_view"]
    assert kind == "view"
    # created over (a integer, b varchar); its table is now (a bigint, b varchar, c double)
    assert [c[:2] for c in ours] == [["a", "INTEGER"], ["b", "VARCHAR"]] == [c[:2] for c in theirs]
    assert [c[:2] for c in found["probe_table"][1]] == [["a", "BIGINT"], ["b", "VARCHAR"], ["c", "DOUBLE"]]


def test_cached_tables_and_new_ones_are_read_by_pragma_table_info(lookups) -> None:
    found, log = lookups
    pragma_reads = log.count("from pragma_table_info(")
    # every table and the temporary one: once each, by the project's lookup; no view, not the missing mart
    tables = [n for n, (kind, _, _) in found.items() if kind in ("table", "temporary")]
    assert len(tables) > 50 and pragma_reads == len(tables), (pragma_reads, len(tables))
    assert f"pragma_table_info('\"{TEMP}\"')" in log
    assert "where table_name = 'no_such_mart'" in log  # dbt-duckdb's query, twice: the fallback and the reference
