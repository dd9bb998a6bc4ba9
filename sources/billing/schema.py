"""The `billing_charges` raw table: FOCUS column names and their DuckDB types.

`warehouse/contracts/billing.yaml` declares the same columns (a test keeps them in sync).
"""

from __future__ import annotations

TABLE = "billing_charges"

DECIMAL = "DECIMAL(38,12)"

#: Money and quantity columns (exact decimals, cast with TRY_CAST so bad text becomes a reject).
DECIMAL_COLUMNS: tuple[str, ...] = (
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "ContractedCost",
    "ListUnitPrice",
    "ContractedUnitPrice",
    "ConsumedQuantity",
    "PricingQuantity",
    "CommitmentDiscountQuantity",
)

#: Timestamp columns, returned as naive UTC.
TIMESTAMP_COLUMNS: tuple[str, ...] = (
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
)

#: Text columns passed through as VARCHAR.
TEXT_COLUMNS: tuple[str, ...] = (
    "BillingCurrency",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "CommitmentDiscountCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountStatus",
    "CommitmentDiscountType",
    "CommitmentDiscountUnit",
    "ConsumedUnit",
    "PricingUnit",
    "PricingCategory",
    "ProviderName",
    "PublisherName",
    "InvoiceIssuerName",
    "InvoiceId",
    "RegionId",
    "RegionName",
    "AvailabilityZone",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "SkuId",
    "SkuPriceId",
    "SkuPriceDetails",
    "SubAccountId",
    "SubAccountName",
    "BillingAccountId",
    "BillingAccountName",
)

#: FOCUS columns we carry; any other source column goes to x_extra.
FOCUS_COLUMNS: tuple[str, ...] = (*DECIMAL_COLUMNS, *TIMESTAMP_COLUMNS, *TEXT_COLUMNS, "Tags")

#: Lineage/provenance columns we add ourselves (x_ prefix as FOCUS reserves it for extensions).
EXTENSION_COLUMNS: tuple[str, ...] = ("x_focus_version", "x_source_format", "x_extra")


def contract_columns() -> dict[str, str]:
    """Column name -> DuckDB type, exactly as in warehouse/contracts/billing.yaml."""
    cols: dict[str, str] = {}
    for c in DECIMAL_COLUMNS:
        cols[c] = DECIMAL
    for c in TIMESTAMP_COLUMNS:
        cols[c] = "TIMESTAMP"
    for c in TEXT_COLUMNS:
        cols[c] = "VARCHAR"
    cols["Tags"] = "JSON"
    cols["x_focus_version"] = "VARCHAR"
    cols["x_source_format"] = "VARCHAR"
    cols["x_extra"] = "JSON"
    return cols
