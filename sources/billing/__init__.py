"""Billing exports (FOCUS 1.0-1.3, AWS CUR legacy, Azure EA/MCA/PAYG, OCI cost reports).

Every format here emits ONE raw table, `billing_charges`, whose columns are FOCUS column
names (see `schema.py`); legacy column mappings live in `mappings.py`.
"""
