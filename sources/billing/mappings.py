"""Every legacy-export -> FOCUS column mapping, as data (documented in docs/sources/billing.md).

A mapping is `{FocusColumn: spec}` where spec is one of
  "a/Col"            the source column (matched case-insensitively, `Label (Name)` -> Name);
  "a/Col|b/Col"      the first of these columns present in the file, coalesced per row;
  {"const": "AWS"}   a constant;
  {"sql": "..."}     an SQL expression over VARCHAR source values, with [[a/Col]] or
                     [[a/Col|b/Col]] placeholders (NULL when no such column exists) and the
                     macros defined in `MACROS`.
Every staged value must be VARCHAR (or NULL); `engine.py` types it and rejects bad values, so
a mapping never hides bad input by turning it into NULL: on a parse failure it returns the
raw text, which the engine then rejects.
Source columns not used by a mapping land in `x_extra` (JSON).
"""

from __future__ import annotations

from typing import Any

import reference

#: Canonical spellings of FOCUS enum values (values are compared case-insensitively); the one list
#: is the `reference` package's, re-exported here under the name the billing code has always used.
FOCUS_ENUMS: dict[str, tuple[str, ...]] = reference.FOCUS_ENUMS

#: FOCUS version inferred from the newest marker column present (FOCUS CSVs carry no version).
#: Checked newest first. Markers are columns introduced in that version.
FOCUS_VERSION_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("1.3", ("ContractApplied", "ServiceProviderName", "HostProviderName", "AllocatedMethodId",
             "AllocatedResourceId", "AllocatedTags")),
    ("1.2", ("InvoiceId", "PricingCurrency", "BillingAccountType", "SubAccountType",
             "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice")),
    ("1.1", ("CommitmentDiscountQuantity", "CommitmentDiscountUnit", "CapacityReservationId",
             "ServiceSubcategory", "SkuMeter", "SkuPriceDetails")),
    ("1.0", ()),
)

#: FOCUS 1.1-1.3 columns billing_charges has no column for: they stay in x_extra, keyed by these
#: spellings whatever case the file uses, so the FOCUS export (fct_focus_export) finds them by name.
FOCUS_EXTRA_COLUMNS: tuple[str, ...] = (
    "ServiceProviderName", "HostProviderName", "BillingAccountType", "SubAccountType", "ServiceSubcategory",
    "SkuMeter", "PricingCurrency", "PricingCurrencyContractedUnitPrice", "PricingCurrencyEffectiveCost",
    "PricingCurrencyListUnitPrice", "ContractApplied", "CapacityReservationId", "CapacityReservationStatus",
)

#: Columns a FOCUS file must have to be loadable at all (any version). Missing -> UnreadableFile.
FOCUS_REQUIRED_COLUMNS: tuple[str, ...] = (
    "BilledCost", "BillingPeriodStart", "BillingPeriodEnd",
    "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory",
)

#: FOCUS 1.0 mandatory columns whose absence is only a warning (the spec examples omit them).
FOCUS_MANDATORY_WARN: tuple[str, ...] = (
    "BillingCurrency", "ProviderName", "PublisherName", "InvoiceIssuerName", "EffectiveCost",
    "ListCost", "ContractedCost", "BillingAccountId", "ServiceName", "ServiceCategory",
    "ChargeDescription", "ChargeClass",
)

#: DuckDB macros usable in {"sql": ...} specs. All take and return VARCHAR.
MACROS: tuple[str, ...] = (
    # Dates as exported by Azure: M/D/YYYY (also zero-padded), M/D/YY, or ISO. Returns ISO text,
    # or the input unchanged when unparseable (so the engine rejects it as invalid_timestamp).
    ("create or replace macro az_ts(x) as coalesce(strftime(coalesce(try_strptime(x, '%m/%d/%Y'), "
    "try_strptime(x, '%m/%d/%y'), try_cast(x as timestamp)), '%Y-%m-%d %H:%M:%S'), x)"),
    # az_ts plus an interval (day -> next day; inclusive period end -> exclusive).
    ("create or replace macro az_ts_plus(x, i) as coalesce(strftime(coalesce(try_strptime(x, '%m/%d/%Y'), "
    "try_strptime(x, '%m/%d/%y'), try_cast(x as timestamp)) + i, '%Y-%m-%d %H:%M:%S'), x)"),
    # Month start / next month start of a date (used when an export has no billing period).
    ("create or replace macro month_start(x) as coalesce(strftime(date_trunc('month', coalesce("
    "try_strptime(x, '%m/%d/%Y'), try_cast(x as timestamptz)::timestamp, "
    "try_cast(regexp_replace(x, 'Z$', ':00Z') as timestamptz)::timestamp)), '%Y-%m-%d %H:%M:%S'), x)"),
    ("create or replace macro month_end(x) as coalesce(strftime(date_trunc('month', coalesce("
    "try_strptime(x, '%m/%d/%Y'), try_cast(x as timestamptz)::timestamp, "
    "try_cast(regexp_replace(x, 'Z$', ':00Z') as timestamptz)::timestamp)) + interval 1 month, "
    "'%Y-%m-%d %H:%M:%S'), x)"),
    # Azure unit with embedded multiplier: '10 Hours' -> 10, '10K' -> 10000, '1 GB' -> 1, 'Hours' -> 1.
    ("create or replace macro unit_mult(u) as coalesce(try_cast(regexp_extract(u, "
    "'^\\s*([0-9]+)\\s*([KM]?)(\\s+|$)', 1) as bigint) * case regexp_extract(u, "
    "'^\\s*([0-9]+)\\s*([KM]?)(\\s+|$)', 2) when 'K' then 1000 when 'M' then 1000000 else 1 end, 1)"),
    ("create or replace macro unit_base(u) as case when regexp_matches(u, '^\\s*[0-9]+\\s*[KM]?(\\s+|$)') "
    "then coalesce(nullif(trim(regexp_replace(u, '^\\s*[0-9]+\\s*[KM]?(\\s+|$)', '')), ''), 'Units') else u end"),
    # Exact quantity x multiplier, as text; non-numeric input passes through to be rejected.
    ("create or replace macro scale_qty(q, m) as case when try_cast(q as decimal(38,12)) is null then q "
    "else (try_cast(q as decimal(38,12)) * m)::varchar end"),
)

# --------------------------------------------------------------------------------------------
# AWS CUR legacy (`lineItem/...`). ChargeCategory from lineItem/LineItemType; see the doc for
# the reasoning per type. Refund -> Credit (FOCUS 1.0-1.3 have no Refund category; a refund
# returns money like a credit, and ChargeClass=Correction is reserved for corrections of a
# previously invoiced period, which CUR does not tell us).
# --------------------------------------------------------------------------------------------
AWS_LINE_ITEM_TYPE: dict[str, tuple[str, str | None]] = {
    # LineItemType: (ChargeCategory, ChargeFrequency)
    "Usage": ("Usage", "Usage-Based"),
    "DiscountedUsage": ("Usage", "Usage-Based"),
    "SavingsPlanCoveredUsage": ("Usage", "Usage-Based"),
    "SavingsPlanNegation": ("Usage", "Usage-Based"),
    "Tax": ("Tax", "One-Time"),
    "Credit": ("Credit", "One-Time"),
    "Refund": ("Credit", "One-Time"),
    "BundledDiscount": ("Credit", "Usage-Based"),
    "EdpDiscount": ("Credit", "Usage-Based"),
    "PrivateRateDiscount": ("Credit", "Usage-Based"),
    "Fee": ("Purchase", "One-Time"),
    "RIFee": ("Purchase", "Recurring"),
    "SavingsPlanRecurringFee": ("Purchase", "Recurring"),
    "SavingsPlanUpfrontFee": ("Purchase", "One-Time"),
}


def _case(source: str, table: dict[str, Any], idx: int) -> str:
    whens = " ".join(
        f"when '{k}' then '{v[idx]}'" for k, v in table.items() if v[idx] is not None
    )
    # Unknown types pass through unchanged (and are reported in warnings by the format module).
    return f"case {source} {whens} else {source} end"


AWS_CUR: dict[str, Any] = {
    "BilledCost": "lineItem/UnblendedCost",
    "EffectiveCost": {"sql": (
        "case [[lineItem/LineItemType]] "
        "when 'SavingsPlanCoveredUsage' then coalesce([[savingsPlan/SavingsPlanEffectiveCost]], [[lineItem/UnblendedCost]]) "
        "when 'DiscountedUsage' then coalesce([[reservation/EffectiveCost]], [[lineItem/UnblendedCost]]) "
        "when 'SavingsPlanNegation' then '0' when 'SavingsPlanUpfrontFee' then '0' "
        "else coalesce([[lineItem/UnblendedCost]]) end"
    )},
    "ListCost": "pricing/publicOnDemandCost",
    "ListUnitPrice": "pricing/publicOnDemandRate",
    "ContractedUnitPrice": "lineItem/UnblendedRate",
    "BillingCurrency": "lineItem/CurrencyCode|pricing/currency",
    "BillingPeriodStart": "bill/BillingPeriodStartDate",
    "BillingPeriodEnd": "bill/BillingPeriodEndDate",
    "ChargePeriodStart": "lineItem/UsageStartDate",
    "ChargePeriodEnd": "lineItem/UsageEndDate",
    "ChargeCategory": {"sql": _case("[[lineItem/LineItemType]]", AWS_LINE_ITEM_TYPE, 0)},
    "ChargeFrequency": {"sql": _case("[[lineItem/LineItemType]]", AWS_LINE_ITEM_TYPE, 1)},
    "ChargeDescription": "lineItem/LineItemDescription",
    "PricingCategory": {"sql": (
        "case when [[lineItem/LineItemType]] in ('DiscountedUsage', 'SavingsPlanCoveredUsage') then 'Committed' "
        "when [[lineItem/UsageType]] ilike '%SpotUsage%' then 'Dynamic' "
        "when [[lineItem/LineItemType]] = 'Usage' then 'Standard' end"
    )},
    "ConsumedQuantity": {"sql": "case when [[lineItem/LineItemType]] in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage') then [[lineItem/UsageAmount]] end"},
    "ConsumedUnit": {"sql": "case when [[lineItem/LineItemType]] in ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage') then [[pricing/unit]] end"},
    "PricingQuantity": "lineItem/UsageAmount",
    "PricingUnit": "pricing/unit",
    "CommitmentDiscountId": "savingsPlan/SavingsPlanARN|reservation/ReservationARN",
    "ProviderName": {"const": "AWS"},
    "PublisherName": "lineItem/LegalEntity|bill/BillingEntity",
    "InvoiceIssuerName": "bill/InvoicingEntity",
    "InvoiceId": "bill/InvoiceId",
    "BillingAccountId": "bill/PayerAccountId",
    "SubAccountId": "lineItem/UsageAccountId",
    "RegionId": "product/regionCode|product/region",
    "RegionName": "product/location",
    "AvailabilityZone": "lineItem/AvailabilityZone",
    "ResourceId": "lineItem/ResourceId",
    "ServiceName": "product/ProductName|product/servicename|lineItem/ProductCode",
    "SkuId": "product/sku",
    "SkuPriceId": "pricing/RateId",
    "_tags_prefix": "resourceTags/",
}

# --------------------------------------------------------------------------------------------
# Azure EA / MCA / pay-as-you-go cost exports (all header generations; German labels resolve to
# the English name in parentheses). Dates are M/D/YYYY; BillingPeriodEndDate is inclusive, so
# +1 day; a daily row covers [Date, Date + 1 day). Prices are per UnitOfMeasure, which may
# embed a multiplier ('10 Hours'): PricingQuantity/Unit are as exported, ConsumedQuantity is
# Quantity x multiplier in the base unit.
# --------------------------------------------------------------------------------------------
AZURE_CHARGE_TYPE: dict[str, tuple[str, str | None]] = {
    "usage": ("Usage", None),
    "purchase": ("Purchase", None),
    "tax": ("Tax", None),
    "refund": ("Credit", None),
    "adjustment": ("Adjustment", None),
    "roundingadjustment": ("Adjustment", None),
    "unusedreservation": ("Usage", None),
    "unusedsavingsplan": ("Usage", None),
}

AZURE_FREQUENCY: dict[str, str] = {"usagebased": "Usage-Based", "recurring": "Recurring", "onetime": "One-Time"}
AZURE_PRICING_MODEL: dict[str, str] = {
    "ondemand": "Standard", "spot": "Dynamic", "reservation": "Committed", "savingsplan": "Committed",
}

_Q = "[[Quantity|UsageQuantity]]"
_UNIT = "[[UnitOfMeasure]]"
_DAY = "[[Date|UsageDateTime|date]]"


def _lower_case(source: str, table: dict[str, str], default: str = "null") -> str:
    whens = " ".join(f"when '{k}' then '{v}'" for k, v in table.items())
    return f"case lower(replace(replace({source}, ' ', ''), '-', '')) {whens} else coalesce({source}, {default}) end"


AZURE: dict[str, Any] = {
    "BilledCost": "CostInBillingCurrency|PreTaxCost|Cost",
    "EffectiveCost": "CostInBillingCurrency|PreTaxCost|Cost",
    "ListUnitPrice": "PayGPrice",
    "ListCost": {"sql": (
        "coalesce([[PayGCostInBillingCurrency]], case when try_cast([[PayGPrice]] as decimal(38,12)) is not null "
        f"and try_cast({_Q} as decimal(38,12)) is not null then (try_cast([[PayGPrice]] as decimal(38,12)) * "
        f"try_cast({_Q} as decimal(38,12)))::decimal(38,12)::varchar end)"
    )},
    "ContractedUnitPrice": "UnitPrice|ResourceRate",
    "BillingCurrency": "BillingCurrencyCode|BillingCurrency|Currency",
    "ChargePeriodStart": {"sql": f"az_ts({_DAY})"},
    "ChargePeriodEnd": {"sql": f"az_ts_plus({_DAY}, interval 1 day)"},
    "BillingPeriodStart": {"sql": f"coalesce(az_ts([[BillingPeriodStartDate]]), month_start({_DAY}))"},
    "BillingPeriodEnd": {"sql": f"coalesce(az_ts_plus([[BillingPeriodEndDate]], interval 1 day), month_end({_DAY}))"},
    "ChargeCategory": {"sql": _lower_case("[[ChargeType]]", {k: v[0] for k, v in AZURE_CHARGE_TYPE.items()}, "'Usage'")},
    "CommitmentDiscountStatus": {"sql": (
        "case lower([[ChargeType]]) when 'unusedreservation' then 'Unused' when 'unusedsavingsplan' then 'Unused' "
        "else case when [[ReservationId|benefitId]] is not null then 'Used' end end"
    )},
    "ChargeFrequency": {"sql": _lower_case("[[Frequency]]", AZURE_FREQUENCY)},
    "PricingCategory": {"sql": _lower_case("[[PricingModel]]", AZURE_PRICING_MODEL)},
    "ChargeDescription": "ProductName|MeterName",
    "PricingQuantity": _Q.strip("[]"),
    "PricingUnit": "UnitOfMeasure",
    "ConsumedQuantity": {"sql": f"scale_qty({_Q}, unit_mult({_UNIT}))"},
    "ConsumedUnit": {"sql": f"unit_base({_UNIT})"},
    "CommitmentDiscountId": "ReservationId|benefitId",
    "CommitmentDiscountName": "ReservationName|benefitName",
    "ProviderName": {"const": "Microsoft"},
    "PublisherName": {"sql": "coalesce([[PublisherName]], 'Microsoft')"},
    "InvoiceIssuerName": {"sql": "coalesce([[PartnerName]], 'Microsoft')"},
    "InvoiceId": "InvoiceId",
    "BillingAccountId": "BillingAccountId",
    "BillingAccountName": "BillingAccountName",
    "SubAccountId": "SubscriptionId|SubscriptionGuid",
    "SubAccountName": "SubscriptionName",
    "RegionId": "ResourceLocation|location",
    "RegionName": "MeterRegion",
    "AvailabilityZone": "AvailabilityZone",
    "ResourceId": "ResourceId|InstanceId|InstanceName",
    "ResourceName": "ResourceName",
    "ResourceType": "ResourceType",
    "ServiceCategory": "ServiceFamily",
    "ServiceName": "MeterCategory|ServiceName",
    "SkuId": "MeterId|ProductId",
    "SkuPriceId": "PartNumber",
    "Tags": "Tags",
}

# --------------------------------------------------------------------------------------------
# OCI cost report. One row per resource-hour; no billing period in the file, so it is the
# calendar month of the charge (OCI bills monthly). isCorrection=true -> ChargeClass Correction;
# lineItem/backreferenceNo (the corrected line) stays in x_extra.
# --------------------------------------------------------------------------------------------
OCI: dict[str, Any] = {
    "BilledCost": "cost/myCost",
    "EffectiveCost": "cost/myCost",
    "ContractedCost": "cost/myCost",
    "ContractedUnitPrice": "cost/unitPrice",
    "BillingCurrency": "cost/currencyCode",
    "ChargePeriodStart": "lineItem/intervalUsageStart",
    "ChargePeriodEnd": "lineItem/intervalUsageEnd",
    "BillingPeriodStart": {"sql": "month_start([[lineItem/intervalUsageStart]])"},
    "BillingPeriodEnd": {"sql": "month_end([[lineItem/intervalUsageStart]])"},
    "ChargeCategory": {"const": "Usage"},
    "ChargeClass": {"sql": "case when lower([[lineItem/isCorrection]]) = 'true' then 'Correction' end"},
    "ChargeFrequency": {"const": "Usage-Based"},
    "ChargeDescription": "product/Description",
    "ConsumedQuantity": "usage/billedQuantity",
    "PricingQuantity": "usage/billedQuantity",
    "ConsumedUnit": "cost/skuUnitDescription",
    "PricingUnit": "cost/skuUnitDescription",
    "ProviderName": {"const": "Oracle"},
    "PublisherName": {"const": "Oracle"},
    "InvoiceIssuerName": {"const": "Oracle"},
    "BillingAccountId": "lineItem/tenantId",
    "SubAccountId": "product/compartmentId",
    "SubAccountName": "product/compartmentName",
    "RegionId": "product/region",
    "RegionName": "product/region",
    "AvailabilityZone": "product/availabilityDomain",
    "ResourceId": "product/resourceId",
    "ServiceName": "product/service",
    "SkuId": "cost/productSku",
    "_tags_prefix": "tags/",
}
