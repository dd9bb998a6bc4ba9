"""Outputs built from the published copy: per-team chargeback/showback reports and decision records.

Both the Dagster assets (after each publication) and the CLI / dashboards use these; they read
only `serving.duckdb`, through `warehouse.serving`.
"""
