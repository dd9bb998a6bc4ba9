{#-
  The fleet identity rule (docs/cost_model.md): a usage host is a GPU bill line's resource when it is
  the line's ResourceName, its ResourceId, or the ResourceId's last path segment. Written once here for
  int_gpu_usage_hourly, int_gpu_usage_unbilled and assert_gpu_hours_priced_once.

  bill_host_keys(relation, columns): each bill line's host keys as rows (`columns` + `host_key`), so
  usage meets them in one equi-join on the key. Comparing each usage row with every bill line on the
  three conditions OR'ed was a range join. Values compare as stored: callers pass lower-case
  resource ids and names and compare them to lower(host).

  host_is_bill_resource(host, resource_id, resource_name): the same rule as one condition, for the rare
  host with a '/' of its own, whose last segment is not the host; the suffix is compared literally
  (a LIKE pattern would make '_' and '%' in a host name wildcards).
-#}
{% macro bill_host_keys(relation, columns) -%}
    select {{ columns | join(', ') }}, resource_name as host_key from {{ relation }} where resource_name is not null
    union
    select {{ columns | join(', ') }}, resource_id from {{ relation }} where resource_id is not null
    union
    select {{ columns | join(', ') }}, regexp_extract(resource_id, '/([^/]*)$', 1)
    from {{ relation }} where resource_id like '%/%'
{%- endmacro %}

{% macro host_is_bill_resource(host, resource_id, resource_name) -%}
    ({{ resource_name }} = lower({{ host }}) or {{ resource_id }} = lower({{ host }})
     or right({{ resource_id }}, length({{ host }}) + 1) = '/' || lower({{ host }}))
{%- endmacro %}
