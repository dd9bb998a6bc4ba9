{#- Helpers for the day-incremental models whose history-wide inputs are the registry and the code
    (int_focus_export_rows, int_api_requests_allocated), beside macros/incremental_days.sql. -#}

{#- The SQL of a history key (one row, x_history_key) for the model `unique_id`: md5 over the registry
    files' content hashes (teams, workloads, mappings, policies) and upstream_code_digest(unique_id) (the
    models, seeds and macros it is built from). A model's <name>_history_key is this; history_days rebuilds
    every day when it moves. -#}
{% macro registry_and_code_key(unique_id) -%}
    select md5(concat_ws('#', coalesce(registry_files.part, ''), '{{ upstream_code_digest(unique_id) }}')) as x_history_key
    from (
        select {{ sorted_distinct_join('file_hash', ',') }} as part
        from {{ ref('stg_audit__file_loads') }}
        where family = 'registry'
    ) as registry_files
{%- endmacro %}

{#- md5 over the code `unique_id` is built from, itself included: the checksums (file contents) of the
    models and seeds upstream of it and the SQL of the project's macros those models call
    (called_macro_digests): a changed rule, seed or macro upstream of it can move rows of any day.
    `unique_id` may be a list: the code of several models, one walk (int_usage_history_key). -#}
{% macro upstream_code_digest(unique_id) -%}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set seen = [unique_id] if unique_id is string else (unique_id | list) -%}
    {#- breadth-first over depends_on: a Python list grows under its own for loop, each node appended is
        visited in turn (one pass, not one per step of the longest path) -#}
    {%- for uid in seen -%}
        {%- set node = graph.nodes.get(uid) -%}
        {%- if node -%}
            {%- for parent in node.depends_on.nodes if parent not in seen and parent in graph.nodes -%}
                {%- do seen.append(parent) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set parts = [] -%}
    {%- set code_nodes = [] -%}
    {%- for uid in seen | sort -%}
        {%- set node = graph.nodes[uid] -%}
        {%- if node.resource_type in ('model', 'seed') -%}
            {%- do parts.append(uid ~ ':' ~ node.checksum.checksum) -%}
            {%- do code_nodes.append(node) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do parts.extend(called_macro_digests(code_nodes)) -%}
    {{ return(local_md5(parts | join(','))) }}
{%- endmacro %}

{#- 'name:md5 of its SQL' (sorted) of every macro of this project that the graph nodes `nodes` call,
    directly or through other macros. A model's checksum covers its own file only, and much of the SQL
    is in macros (latest_rows, canonical_gpu_model, usage_cover...): without them an upgrade that edits a
    macro would keep the days built with the old SQL. A model calls a macro if dbt recorded the call
    (depends_on.macros: the calls rendered at parse, where `execute` is false) or its text calls the name
    (`name(`: calls under `execute` or `is_incremental()`, and hooks); a macro calls those of its own
    depends_on.macros (dbt's static reading of every call in it) and of its text, and, for a dispatching
    macro `x`, every implementation `<engine>__x`, so the digest is the same on DuckDB and Spark. dbt's
    own macros move only with the pinned dbt version. A name that merely looks called (a SQL function of
    the same name) only makes the digest cover one macro more. -#}
{% macro called_macro_digests(nodes) -%}
    {%- set macros = gpu_ledger -%}
    {%- set calls = modules.re.compile('([A-Za-z_][A-Za-z0-9_]*) *[(]') -%}
    {%- set implementations = {} -%}
    {%- for name in macros.keys() | sort if '__' in name -%}
        {%- do implementations.setdefault(name.split('__', 1)[1], []).append(name) -%}
    {%- endfor -%}
    {%- set covered = [] -%}
    {%- for node in nodes -%}
        {%- for id in node.depends_on.macros if id.startswith('macro.gpu_ledger.') -%}
            {%- do covered.append(id.split('.')[2]) -%}
        {%- endfor -%}
        {%- do covered.extend(calls.findall(node.raw_code or '') | unique | select('in', macros)) -%}
    {%- endfor -%}
    {%- set covered = covered | unique | list -%}
    {#- a Python list grows under its own for loop: each name appended is visited in turn -#}
    {%- for name in covered -%}
        {%- set macro = macros[name].macro -%}
        {%- set called = calls.findall(macro.macro_sql) | select('in', macros) | list
                         + implementations.get(name, []) -%}
        {%- for id in macro.depends_on.macros if id.startswith('macro.gpu_ledger.') -%}
            {%- do called.append(id.split('.')[2]) -%}
        {%- endfor -%}
        {%- for callee in called | unique if callee not in covered -%}
            {%- do covered.append(callee) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set parts = [] -%}
    {%- for name in covered | sort -%}
        {%- do parts.append(name ~ ':' ~ local_md5(macros[name].macro.macro_sql)) -%}
    {%- endfor -%}
    {{ return(parts) }}
{%- endmacro %}

{#- A pre-hook: DuckDB's delete+insert replaces the days a run rebuilds that still hold rows; a day
    whose every row is gone from `days_sql` (a restated bill without that day) is deleted here. -#}
{% macro clear_vanished_days(day_column, days_sql) -%}
    {%- if execute and is_incremental() and target.type != 'spark' -%}
        delete from {{ this }} where {{ day_column }} not in ({{ days_sql }})
    {%- endif -%}
{%- endmacro %}

{#- The columns int_focus_export_rows keeps for its incremental build and fct_focus_export leaves out. -#}
{% macro focus_export_build_columns() -%}
    {{ return(['x_charge_day', 'x_split_method', 'x_split_workload_id', 'x_split_weight', 'x_split_weight_total',
               'x_split_share', 'x_split_share_rank', 'x_split_idle_share', 'x_split_portion_fraction',
               'x_loaded_at', 'x_history_key', 'x_built_at']) }}
{%- endmacro %}

{#- int_focus_allocation_splits: per billing period of `plan` (macros/incremental_days.sql; every period:
    {'all': true}), `digest`, an md5 over the period's inputs other than its own ledger lines, each as the
    model weighs it: the teams' used GPU-hours of the month, the chargeback weights untagged credits and
    tax are spread by (both basis), and the idle share of every workload on each day its lines are charged
    on. Stored on the period's rows (x_inputs_digest): a period whose digest moved is rebuilt (a new usage
    day moves its month's weights and idle shares), whatever file the change came from. -#}
{% macro allocation_split_digests(plan) -%}
    select period, md5({{ gpu_ledger.sorted_distinct_join('line', ',') }}) as digest
    from (
        select cast(date_trunc('month', day) as date) as period,
               concat_ws('|', 'used', team_id, cast(cast(sum(used_gpu_hours) as decimal(38, 12)) as string)) as line
        from {{ ref('fct_gpu_utilisation_daily') }}
        where team_id <> '(unallocated)' and used_gpu_hours > 0
        group by cast(date_trunc('month', day) as date), team_id
        union all
        select billing_period_start, concat_ws('|', 'chargeback', basis, currency, team_id, cast(sum(amount) as string))
        from {{ ref('int_chargeback_lines') }}
        where line_kind in ('direct_cost', 'shared_cost', 'idle_cost', 'unused_commitment')
        group by billing_period_start, basis, currency, team_id
        union all
        select line_days.period, concat_ws('|', 'idle', idle.workload_id, cast(idle.day as string),
                                           cast(cast(idle.idle_share as decimal(18, 12)) as string))
        from {{ ref('int_gpu_idle_by_workload') }} as idle
        inner join (
            select distinct cast(BillingPeriodStart as date) as period, cast(ChargePeriodStart as date) as day
            from {{ ref('ledger_focus') }}
        ) as line_days on line_days.day = idle.day
    ) as inputs
    where period is not null and {{ gpu_ledger.in_plan('period', plan) }}
    group by period
{%- endmacro %}
