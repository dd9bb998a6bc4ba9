{# Generic test: every non-null value of the column lies in [min_value, max_value] (a small tolerance
   for float rounding). Used for percentages (0-100) and GPU-hour columns that must never be negative. #}
{% test value_between(model, column_name, min_value=none, max_value=none, tolerance=0.000001) %}
select {{ column_name }}
from {{ model }}
where {{ column_name }} is not null
  and (
    false
    {% if min_value is not none %} or {{ column_name }} < {{ min_value }} - {{ tolerance }}{% endif %}
    {% if max_value is not none %} or {{ column_name }} > {{ max_value }} + {{ tolerance }}{% endif %}
  )
{% endtest %}
