-- LiteLLM proxy request log, one row per request_id, its latest load (macros/latest_rows.sql
-- staged_api_requests; int_api_requests_allocated reads the same SQL for the requests of the days it
-- rebuilds).
{{ staged_api_requests() }}
