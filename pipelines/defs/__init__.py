"""Each area under pipelines/defs/ exposes `defs`; pipelines/definitions.py merges them all."""

# Before any area imports dagster-dbt: it is imported without dbt-core (pipelines/dbt_project.py).
from pipelines import dbt_project as _dbt_project  # noqa: F401
