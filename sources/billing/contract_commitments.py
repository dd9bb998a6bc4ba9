"""FOCUS 1.3 Contract Commitment dataset -> raw.contract_commitments (never billing charges).

FOCUS 1.3 adds a second dataset beside Cost and Usage: one row per commitment of a contract
(a minimum spend, a usage commitment, a reservation or savings plan), with its period, its committed
cost and quantity. It has no BilledCost or ChargePeriodStart, so it is not a bill: it is recognised
by its own header and loaded into its own table, so the ledger's sums never include it.
CSV or CSV.gz (DuckDB reads both) or Parquet; columns are matched case-insensitively; a column the
dataset does not define is named in a warning and not loaded.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from sources.billing.reader import PARQUET_MAGIC, header_keys_from_head
from sources.common import ParseOutput, Reject, SourceFormat, UnreadableFile

TABLE = "contract_commitments"
MONEY = ("ContractCommitmentCost", "ContractCommitmentQuantity")
TIMESTAMPS = ("ContractCommitmentPeriodStart", "ContractCommitmentPeriodEnd", "ContractPeriodStart", "ContractPeriodEnd")
TEXT = ("ContractCommitmentId", "ContractCommitmentType", "ContractCommitmentCategory", "ContractCommitmentUnit",
        "ContractCommitmentDescription", "ContractId", "BillingCurrency")
COLUMNS = TEXT + MONEY + TIMESTAMPS  # the 13 columns of the FOCUS 1.3 Contract Commitment dataset
REQUIRED = ("ContractCommitmentId", "ContractId", "ContractCommitmentPeriodStart", "ContractCommitmentPeriodEnd")


def detect(path: Path, head: bytes) -> bool:
    """ContractCommitmentId and ContractCommitmentPeriodStart in the header, and no bill columns."""
    keys = header_keys_from_head(path, head)
    return ("contractcommitmentid" in keys and "contractcommitmentperiodstart" in keys
            and "billedcost" not in keys)


def _ts(col: str) -> str:
    # A zone-less value is UTC; `Z` and offsets are converted (the session runs in UTC).
    return f"cast(try_cast(nullif(trim({col}), '') as timestamptz) as timestamp)"


def parse(path: Path) -> ParseOutput:
    path = Path(path)
    with open(path, "rb") as fh:
        parquet = fh.read(4) == PARQUET_MAGIC
    con = duckdb.connect()
    try:
        con.execute("set timezone = 'UTC'")
        reader = ("read_parquet(?, file_row_number = true)" if parquet
                  else "read_csv(?, header = true, all_varchar = true, delim = ',', quote = '\"')")
        try:
            con.execute(f"create table src as select * from {reader}", [str(path)])
        except duckdb.Error as exc:
            raise UnreadableFile(path, None, f"not a readable Contract Commitment file: {exc}") from exc
        present = {c.lower(): c for (c,) in con.execute(
            "select column_name from (describe src)").fetchall()}
        missing = [c for c in REQUIRED if c.lower() not in present]
        if missing:
            raise UnreadableFile(path, 1, f"Contract Commitment dataset without {', '.join(missing)}")
        out = ParseOutput()
        unknown = sorted(c for k, c in present.items()
                         if k not in {x.lower() for x in COLUMNS} and k != "file_row_number")
        if unknown:
            out.warnings.append(f"columns the Contract Commitment dataset does not define, not loaded: {', '.join(unknown)}")

        def src(col: str) -> str:
            return f'cast("{present[col.lower()]}" as varchar)' if col.lower() in present else "cast(null as varchar)"

        line = "file_row_number + 1" if parquet else "row_number() over () + 1"
        select = [f"{line} as _source_line"]
        select += [f"nullif(trim({src(c)}), '') as {c}" for c in TEXT if c != "BillingCurrency"]
        select.append(f"upper(nullif(trim({src('BillingCurrency')}), '')) as BillingCurrency")
        select += [f"try_cast(nullif(trim({src(c)}), '') as decimal(38, 12)) as {c}" for c in MONEY]
        select += [f"{_ts(src(c))} as {c}" for c in TIMESTAMPS]
        select += [f"{src(c)} as raw_{c}" for c in (*MONEY, *TIMESTAMPS, "ContractCommitmentId", "ContractId")]
        con.execute(f"create table typed as select {', '.join(select)} from src")
        checks = [(f"{c} is null and nullif(trim(raw_{c}), '') is not null", "non_numeric", c) for c in MONEY]
        checks += [(f"{c} is null and nullif(trim(raw_{c}), '') is not null", "invalid_timestamp", c) for c in TIMESTAMPS]
        checks += [(f"{c} is null", "missing_value", c) for c in REQUIRED]
        checks.append(("ContractCommitmentPeriodEnd < ContractCommitmentPeriodStart", "period_reversed",
                       "ContractCommitmentPeriodEnd"))
        bad: set[int] = set()
        for where, rule, col in checks:
            for n, value in con.execute(f"select _source_line, raw_{col} from typed where {where}").fetchall():
                bad.add(n)
                out.rejects.append(Reject(n, rule, f"{col} {value!r}: {rule.replace('_', ' ')}", col, value))
        raw_cols = ", ".join(f"raw_{c}" for c in (*MONEY, *TIMESTAMPS, "ContractCommitmentId", "ContractId"))
        keep = f"where _source_line not in ({', '.join(map(str, sorted(bad)))})" if bad else ""
        out.tables[TABLE] = con.execute(
            f"select * exclude ({raw_cols}) from typed {keep} order by _source_line").to_arrow_table()
        return out
    finally:
        con.close()


FORMATS = [SourceFormat("focus_contract_commitment", "billing", detect, parse,
                        "FinOps FOCUS 1.3 Contract Commitment dataset (one row per contract commitment)")]
