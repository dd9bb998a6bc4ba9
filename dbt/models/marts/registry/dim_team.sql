-- Teams with their budgets, as published for chargeback and reports.
select {{ star_except(['_file_hash', '_source_file', '_source_line']) }} from {{ ref('stg_registry__teams') }}
