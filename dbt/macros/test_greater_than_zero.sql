{# Generic test: every non-null value of the column is strictly positive (prices, rates). #}
{% test greater_than_zero(model, column_name) %}
select {{ column_name }}
from {{ model }}
where {{ column_name }} <= 0
{% endtest %}
