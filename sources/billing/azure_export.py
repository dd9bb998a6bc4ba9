"""Azure cost exports (EA, MCA/partner camelCase, legacy pay-as-you-go, German-localised) -> FOCUS.

Header names are matched case-insensitively after BOM stripping, and localised labels
`Maßeinheit (UnitOfMeasure)` resolve to the English name in parentheses.
"""

from __future__ import annotations

from pathlib import Path

from sources.billing import mappings
from sources.billing.legacy import parse_legacy
from sources.billing.reader import header_keys_from_head
from sources.common import ParseOutput, SourceFormat

COST_KEYS = {"costinbillingcurrency", "pretaxcost", "costinusd", "paygcostinbillingcurrency"}
REQUIRED = ("CostInBillingCurrency|PreTaxCost|Cost", "Date|UsageDateTime")


def detect(path: Path, head: bytes) -> bool:
    """Header has MeterCategory (or MeterId) and an Azure cost column."""
    keys = header_keys_from_head(path, head)
    return bool(keys & {"metercategory", "meterid"}) and bool(keys & COST_KEYS)


def flavour(keys: set[str]) -> str:
    """Which Azure export generation the header belongs to (x_focus_version)."""
    if "pretaxcost" in keys:
        return "legacy-azure-payg"
    if "billingcurrency" in keys or "partnername" in keys:
        return "legacy-azure-mca"
    return "legacy-azure-ea"


def parse(path: Path) -> ParseOutput:
    """Parse an Azure cost export into billing_charges (mapping: mappings.AZURE)."""
    path = Path(path)
    with open(path, "rb") as fh:
        keys = header_keys_from_head(path, fh.read(65536))
    out, _ = parse_legacy(path, mappings.AZURE, flavour(keys), FORMATS[0].name, REQUIRED)
    if not keys & {"billingcurrencycode", "billingcurrency", "currency"}:
        out.warnings.append("no currency column: BillingCurrency is NULL")
    return out


FORMATS = [
    SourceFormat(
        name="azure_cost_export",
        family="billing",
        detect=detect,
        parse=parse,
        description="Azure Cost Management export (EA, MCA, pay-as-you-go; any header generation)",
    )
]
