"""The suite mini-language: `Suite` (one table's expectations, as data) and the shorthands the
suite modules write them with. Each shorthand returns plain (GX expectation class name, kwargs)
pairs, so a suite can be compared, filtered and counted without importing great-expectations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from warehouse.reference import CURRENCIES

#: A table above this many rows is validated on a deterministic uniform sample of this size
#: (plus the suspect rows, see runner.read_frame).
SAMPLE_ROWS = 100_000
SAMPLE_SEED = 42

# Float rounding allowed at the bounds, as dbt's `value_between` check (column_constraints) allows: a share computed as
# a quotient of sums can land at 100.00000000000001 (seen on Spark, which sums in another order).
FLOAT_TOLERANCE = 1e-6

Expectation = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Suite:
    """One table's expectations: (GX expectation class name, kwargs) pairs, and where they run.

    `schema` is the DuckDB schema of `table` (raw or marts); `asset_key` the Dagster asset the
    check is attached to (default `<schema>/<table>`); `name` the check name (default
    `gx_<table>` for marts, `gx_raw_<table>` for raw tables); `sample_rows` bounds how many rows
    are sampled from a bigger table (None: validate every row, whatever the size).
    """

    table: str
    expectations: tuple[Expectation, ...]
    blocking: bool = True
    schema: str = "marts"
    asset_key: tuple[str, ...] = ()
    name: str = ""
    sample_rows: int | None = SAMPLE_ROWS

    @property
    def key(self) -> tuple[str, ...]:
        return self.asset_key or (self.schema, self.table)

    @property
    def check_name(self) -> str:
        return self.name or (f"gx_{self.table}" if self.schema == "marts" else f"gx_{self.schema}_{self.table}")

    @property
    def target(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def severity(self) -> str:
        """As recorded in audit.check_results: 'error' stops the publication, 'warn' does not."""
        return "error" if self.blocking else "warn"

    def columns(self) -> list[str]:
        """Every column an expectation names, in first-mention order."""
        return list(dict.fromkeys(c for _, kwargs in self.expectations for c in named(kwargs)))


def named(kw: dict[str, Any]) -> list[str]:
    """The columns one expectation's kwargs name."""
    return [kw[k] for k in ("column", "column_A", "column_B") if k in kw] + list(kw.get("column_list", ()))


def flat(items: tuple[Expectation | tuple[Expectation, ...], ...]) -> tuple[Expectation, ...]:
    """Expectations and tuples of expectations, as one flat tuple."""
    out: list[Expectation] = []
    for item in items:
        if isinstance(item[0], str):
            out.append(item)  # type: ignore[arg-type]
        else:
            out.extend(item)  # type: ignore[arg-type]
    return tuple(out)


# -- expectation shorthands -------------------------------------------------------------------------

def not_null(*columns: str) -> tuple[Expectation, ...]:
    return tuple(("ExpectColumnValuesToNotBeNull", {"column": c}) for c in columns)


def unique(column: str) -> tuple[Expectation, ...]:
    """Not null and unique: a key."""
    return (("ExpectColumnValuesToNotBeNull", {"column": column}),
            ("ExpectColumnValuesToBeUnique", {"column": column}))


def unique_together(*columns: str) -> Expectation:
    return ("ExpectCompoundColumnsToBeUnique", {"column_list": list(columns)})


def in_set(column: str, values: tuple[str, ...] | list[str]) -> Expectation:
    """Nulls are not checked (GX column-map expectations skip them); add not_null when required."""
    return ("ExpectColumnValuesToBeInSet", {"column": column, "value_set": list(values)})


def between(column: str, low: float | None = None, high: float | None = None, strict_low: bool = False) -> Expectation:
    kwargs: dict[str, Any] = {"column": column, "min_value": low, "max_value": high}
    if strict_low:
        kwargs["strict_min"] = True
    return ("ExpectColumnValuesToBeBetween", kwargs)


def non_negative(*columns: str) -> tuple[Expectation, ...]:
    return tuple(between(c, 0) for c in columns)


def positive(*columns: str) -> tuple[Expectation, ...]:
    return tuple(between(c, 0, strict_low=True) for c in columns)


def percent(*columns: str) -> tuple[Expectation, ...]:
    """0-100 where present (within FLOAT_TOLERANCE)."""
    return tuple(between(c, -FLOAT_TOLERANCE, 100 + FLOAT_TOLERANCE) for c in columns)


def ratio(*columns: str) -> tuple[Expectation, ...]:
    """0-1 where present (within FLOAT_TOLERANCE)."""
    return tuple(between(c, -FLOAT_TOLERANCE, 1 + FLOAT_TOLERANCE) for c in columns)


def ordered(low: str, high: str) -> Expectation:
    """low <= high on every row where both are present."""
    return ("ExpectColumnPairValuesAToBeGreaterThanB",
            {"column_A": high, "column_B": low, "or_equal": True, "ignore_row_if": "either_value_is_missing"})


def matches(column: str, regex: str) -> Expectation:
    return ("ExpectColumnValuesToMatchRegex", {"column": column, "regex": regex})


def known_currency(column: str) -> Expectation:
    """An ISO 4217 code (or XXX) where present."""
    return in_set(column, CURRENCIES)


def currency(column: str, required: bool = True) -> tuple[Expectation, ...]:
    return (*(not_null(column) if required else ()), known_currency(column))


def latency_order(low: str, high: str, kinds: tuple[str, ...] = ("ttft", "tpot", "itl", "e2el")) -> tuple[Expectation, ...]:
    """`<kind>_ms_<low>` <= `<kind>_ms_<high>` for each latency kind (p50 <= p99, ...)."""
    return tuple(ordered(f"{k}_ms_{low}", f"{k}_ms_{high}") for k in kinds)


def mart(table: str, *expectations: Expectation | tuple[Expectation, ...], blocking: bool = False) -> Suite:
    return Suite(table, flat(expectations), blocking=blocking)
