{{ config(
    materialized='incremental',
    incremental_strategy=gpu_ledger.day_incremental_strategy(),
    partition_by=gpu_ledger.day_partition_by('x_charge_day'),
    unique_key='x_charge_day',
    on_schema_change='append_new_columns',
    pre_hook=[
        {"sql": "{{ gpu_ledger.clear_when_history_changed(ref('int_focus_export_history_key'), [('x_built_at', 'timestamp')]) }}", "transaction": false},
        {"sql": "{{ gpu_ledger.clear_vanished_days('x_charge_day', 'select distinct charge_day from ' ~ ref('int_focus_allocation_splits')) }}", "transaction": false}
    ]
) }}
-- The FOCUS 1.3 export's rows (fct_focus_export publishes them without the x_charge_day / x_split_* /
-- x_loaded_at / x_history_key columns kept here for the incremental build).
-- One row per part of a ledger line (int_focus_allocation_splits): an unsplit line is one row with
-- the Allocated* columns null; a line split by allocation (shared cost spread to teams, idle GPU time,
-- unused commitment under the spread policy) is one row per part, its costs the part's share of the
-- line with the rounding remainder on the largest share, so the rows of a line add up to the line
-- exactly (blocking test assert_focus_export_partitions_ledger). FOCUS 1.3 names: the source's
-- ServiceProviderName and HostProviderName, else ProviderName; the 1.3 columns the source sent (kept in
-- x_extra) are carried through; GPU Ledger's own columns are x_ columns.
-- Incremental by UTC day of ChargePeriodStart (x_charge_day; macros/incremental_days.sql): a row is
-- its ledger line, its split (int_focus_allocation_splits) and the policies. A run rebuilds the days
--   of lines from billing files loaded since the watermark x_loaded_at (new, late or restated bills),
--   of splits that differ from the ones the stored rows were built with (x_split_*: a new usage day moves
--   that day's idle shares, and the month's weights move the splits of that month's shared, credit and
--   tax lines) or whose line is gone, and the backfill window;
-- every day when int_focus_export_history_key changed (registry files, the SQL and seeds upstream).
-- The comparison reads only the billing periods the splits rebuilt since this model's last build (their
-- x_built_at is later than every stamp here; the splits rewrite a period whole, so a split can only
-- change or vanish in such a period) and the periods the stored rows hold that the splits hold no more:
-- a night reads its month, not the history. The money arithmetic below (DECIMAL(38,12) products, 128-bit
-- on DuckDB) runs on the rebuilt days only.
{%- set split_inputs = ['method', 'workload_id', 'weight', 'weight_total', 'share', 'share_rank', 'idle_share',
                        'portion_fraction'] %}
{%- if is_incremental() %}
    {%- set changed_days_sql %}
        with rebuilt_periods as (
            select distinct x_billing_period as period
            from {{ ref('int_focus_allocation_splits') }}
            where x_built_at > (select coalesce(max(x_built_at), cast('1900-01-01' as timestamp)) from {{ this }})
            union
            select period from (
                select cast(BillingPeriodStart as date) as period from {{ this }}
                except
                select x_billing_period from {{ ref('int_focus_allocation_splits') }}
            ) as vanished
        ),
        current_splits as (
            select x_charge_key, portion, team_id, charge_day, {{ split_inputs | join(', ') }}
            from {{ ref('int_focus_allocation_splits') }}
            where x_billing_period in (select period from rebuilt_periods)
        ),
        built_splits as (
            select x_charge_key, x_allocation_portion, x_team, x_charge_day,
                   {% for c in split_inputs %}x_split_{{ c }}{{ ', ' if not loop.last }}{% endfor %}
            from {{ this }}
            where cast(BillingPeriodStart as date) in (select period from rebuilt_periods)
        ),
        changed as (
            select charge_day as day from (select * from current_splits except select * from built_splits) as added
            union
            select x_charge_day as day from (select * from built_splits except select * from current_splits) as removed
            union
            select cast(ledger.ChargePeriodStart as date) as day
            from {{ ref('ledger_focus') }} as ledger
            inner join ({{ files_loaded_since_last_build() }}) as new_files on new_files.file_hash = ledger.x_file_hash
        )
        select distinct day from changed
    {%- endset %}
    {%- set plan = history_days(changed_days_sql, ref('int_focus_export_history_key')) %}
{%- else %}
    {%- set plan = {'all': true, 'days': []} %}
{%- endif %}
{%- set costs = ['BilledCost', 'EffectiveCost', 'ListCost', 'ContractedCost'] %}
with ledger as (
    select * from {{ ref('ledger_focus') }}
    where {{ in_plan('ChargePeriodStart', plan) }}
),

splits as (
    select * from {{ ref('int_focus_allocation_splits') }}
    where {{ in_plan('charge_day', plan) }}
),

parts as (
    select
        splits.portion, splits.team_id, splits.workload_id, splits.method, splits.weight, splits.weight_total,
        splits.share, splits.share_rank, splits.idle_share, splits.portion_fraction, policies.chargeback_basis,
        splits.charge_day,
        ledger.*,
        {%- for c in costs %}
        case when splits.portion = 'idle' then {{ money('ledger.' ~ c ~ ' * splits.idle_share') }}
             else ledger.{{ c }} - {{ money('ledger.' ~ c ~ ' * splits.idle_share') }} end as portion_{{ c }},
        {%- endfor %}
        {{ times_factor('splits.portion_fraction', 'splits.share', 'decimal(18, 12)') }} as fraction
    from splits
    inner join ledger on ledger.x_charge_key = splits.x_charge_key
    cross join {{ ref('int_cost_policies') }} as policies
),

amounts as (
    select
        parts.*,
        {%- for c in costs %}
        {{ times_factor('portion_' ~ c, 'share') }} as share_{{ c }}{{ ',' if not loop.last }}
        {%- endfor %}
    from parts
),

balanced as (
    select
        amounts.*,
        {%- for c in costs %}
        share_{{ c }} + case when share_rank = 1
                             then portion_{{ c }} - sum(share_{{ c }}) over (partition by x_charge_key, portion)
                             else 0 end as split_{{ c }}{{ ',' if not loop.last }}
        {%- endfor %}
    from amounts
),

final as (
    select
        concat(x_charge_key, '|', portion, '|', team_id) as x_export_row_id,
        x_charge_key,
        {%- for c in costs %}
        {{ money('split_' ~ c) }} as {{ c }},
        {%- endfor %}
        ListUnitPrice, ContractedUnitPrice,
        cast(ConsumedQuantity * fraction as decimal(38, 12)) as ConsumedQuantity, ConsumedUnit,
        cast(PricingQuantity * fraction as decimal(38, 12)) as PricingQuantity, PricingUnit, PricingCategory,
        BillingCurrency, BillingPeriodStart, BillingPeriodEnd, ChargePeriodStart, ChargePeriodEnd,
        ChargeCategory, ChargeClass, ChargeDescription, ChargeFrequency,
        CommitmentDiscountCategory, CommitmentDiscountId, CommitmentDiscountName, CommitmentDiscountStatus,
        CommitmentDiscountType, CommitmentDiscountQuantity, CommitmentDiscountUnit,
        -- FOCUS 1.3 columns the ledger has no column for arrive in x_extra under their FOCUS name.
        -- A 1.3 source names its own service and host provider (a marketplace seller on a cloud):
        -- kept; ProviderName (1.0-1.2) fills them only when the source has none.
        coalesce(nullif({{ json_text('x_extra', "'ServiceProviderName'") }}, ''), ProviderName) as ServiceProviderName,
        coalesce(nullif({{ json_text('x_extra', "'HostProviderName'") }}, ''), ProviderName) as HostProviderName,
        PublisherName, InvoiceIssuerName, InvoiceId,
        BillingAccountId, BillingAccountName, nullif({{ json_text('x_extra', "'BillingAccountType'") }}, '') as BillingAccountType,
        SubAccountId, SubAccountName, nullif({{ json_text('x_extra', "'SubAccountType'") }}, '') as SubAccountType,
        RegionId, RegionName, AvailabilityZone, ResourceId, ResourceName, ResourceType,
        ServiceCategory, nullif({{ json_text('x_extra', "'ServiceSubcategory'") }}, '') as ServiceSubcategory, ServiceName,
        SkuId, nullif({{ json_text('x_extra', "'SkuMeter'") }}, '') as SkuMeter, SkuPriceId, SkuPriceDetails, Tags,
        nullif({{ json_text('x_extra', "'PricingCurrency'") }}, '') as PricingCurrency,
        try_cast(nullif({{ json_text('x_extra', "'PricingCurrencyContractedUnitPrice'") }}, '') as decimal(38, 12)) as PricingCurrencyContractedUnitPrice,
        try_cast(nullif({{ json_text('x_extra', "'PricingCurrencyListUnitPrice'") }}, '') as decimal(38, 12)) as PricingCurrencyListUnitPrice,
        -- a cost: a split row carries its share of the line, like the quantities
        cast(try_cast(nullif({{ json_text('x_extra', "'PricingCurrencyEffectiveCost'") }}, '') as decimal(38, 12)) * fraction as decimal(38, 12))
            as PricingCurrencyEffectiveCost,
        nullif({{ json_text('x_extra', "'ContractApplied'") }}, '') as ContractApplied,
        nullif({{ json_text('x_extra', "'CapacityReservationId'") }}, '') as CapacityReservationId,
        nullif({{ json_text('x_extra', "'CapacityReservationStatus'") }}, '') as CapacityReservationStatus,
        -- A provider's own allocation (the FOCUS 1.3 columns it sent, kept in x_extra under their FOCUS
        -- names) is written through as received: int_focus_allocation_splits never splits such a line, so
        -- method is null there and each coalesce below takes the provider's value.
        coalesce(nullif({{ json_text('x_extra', "'AllocatedMethodId'") }}, ''), method) as AllocatedMethodId,
        coalesce(nullif({{ json_text('x_extra', "'AllocatedMethodDetails'") }}, ''), case when method is not null then concat(
            '{"method":"', method, '","portion":"', portion,
            '","basis":"', chargeback_basis,
            '","weight":', {{ decimal_text('weight') }}, ',"pool_total":', {{ decimal_text('weight_total') }},
            ',"share":', {{ decimal_text('share') }}, ',"idle_share":', {{ decimal_text('idle_share') }}, '}') end)
            as AllocatedMethodDetails,
        coalesce(nullif({{ json_text('x_extra', "'AllocatedResourceId'") }}, ''), case when method is not null
             then case when workload_id is not null then concat('workload/', workload_id)
                       else concat('team/', team_id) end end) as AllocatedResourceId,
        coalesce(nullif({{ json_text('x_extra', "'AllocatedResourceName'") }}, ''), case when method is not null then coalesce(workload_id, team_id) end)
            as AllocatedResourceName,
        coalesce(nullif({{ json_text('x_extra', "'AllocatedTags'") }}, ''), case when method is not null then concat(
            '{"x_team":"', replace(team_id, '"', ''), '"',
            case when workload_id is not null then concat(',"x_workload_id":"', replace(workload_id, '"', ''), '"')
                 else '' end,
            '}') end) as AllocatedTags,
        team_id as x_team,
        coalesce(workload_id, case when portion = 'rest' and method is null then x_workload_id end) as x_workload_id,
        x_environment,
        x_gpu_model,
        x_gpu_count,
        cast(x_gpu_hours * fraction as decimal(38, 9)) as x_gpu_hours,
        x_instance_type,
        portion as x_allocation_portion,
        -- who allocated the row: our split ('gpu-ledger'), the source ('provider') or nobody (null); a
        -- reader re-assembling a line drops only our Allocated* values (warehouse/export.py)
        case when method is not null then 'gpu-ledger'
             when nullif({{ json_text('x_extra', "'AllocatedMethodId'") }}, '') is not null then 'provider' end
            as x_allocation_source,
        x_team as x_ledger_team,
        x_source_format,
        x_focus_version as x_source_focus_version,
        -- kept for the incremental build, not published (fct_focus_export)
        charge_day as x_charge_day,
        {%- for c in split_inputs %}
        {{ c }} as x_split_{{ c }},
        {%- endfor %}
        {{ latest_file_load() }} as x_loaded_at,
        (select max(x_history_key) from {{ ref('int_focus_export_history_key') }}) as x_history_key,
        -- when the day was built: fct_focus_export copies the days built since its check last passed
        cast({{ dbt.current_timestamp() }} as timestamp) as x_built_at
    from balanced
)

select * from final
