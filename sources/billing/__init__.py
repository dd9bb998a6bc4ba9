"""Billing exports (FOCUS 1.0-1.3, AWS CUR legacy, Azure EA/MCA/PAYG, OCI cost reports).

Every bill format here emits ONE raw table, `billing_charges`, whose columns are FOCUS
column names (see `schema.py`); legacy column mappings live in `mappings.py`. Two datasets
that are no bill have their own tables: invoice totals (`billing_invoices`) and the FOCUS 1.3
Contract Commitment dataset (`contract_commitments`).
"""
