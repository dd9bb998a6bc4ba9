"""The warehouse: the ground floor that `pipelines/` (Dagster) and `dashboards/` both stand on.

- `home`: where everything lives (`Home`, `resolve_home`), resolved at call time.
- `status`: the last refresh outcome (HOME/last_refresh.json).
- `landing`, `raw`, `ingest`, `audit`: landing zone, raw table contracts and their loader, audit tables.
- `expectations`: great-expectations suites over raw frames and published marts.
- `publish`, `serving`: the published copy (atomic swap) and its one reader.
- `lake`: the Parquet export for engines that cannot open DuckDB (Spark).
- `reference`: shared reference lists (currencies, FOCUS enumerations, GPU aliases).

Nothing here imports Dagster.
"""
