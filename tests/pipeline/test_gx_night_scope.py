"""GX on a night: a raw suite scoped to the files a refresh loaded (pipelines/defs/quality/checks.py) reads those
files' rows only, and still finds a key that one of them shares with an earlier file's row.

A raw table here is a DuckDB table with the loader's lineage column `_file_hash`: file `old` holds
ids k0..k59999 (every one valid), file `new` holds k60000..k60999. The suite is sampled above 20,000
rows, so the scoped read (1,000 rows) takes the whole-frame path and the unscoped one the sampled path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from warehouse.expectations import Suite, read_frame, validate

SUITE = Suite("t", (
    ("ExpectColumnValuesToNotBeNull", {"column": "id"}),
    ("ExpectColumnValuesToBeUnique", {"column": "id"}),
    ("ExpectColumnValuesToBeBetween", {"column": "price", "min_value": 0, "strict_min": True}),
), schema="raw", sample_rows=20_000)


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema raw")
    con.execute("""create table raw.t as select 'k' || i as id, (i % 97 + 1)::decimal(18, 6) as price,
                   case when i < 60000 then 'old' else 'new' end as _file_hash from range(61000) r(i)""")
    con.close()
    return path


def _read(db: Path, doctor: str | None = None, files: list[str] | None = None) -> tuple:
    con = duckdb.connect(str(db))
    try:
        if doctor:
            con.execute(doctor)
        return read_frame(con, SUITE, files)
    finally:
        con.close()


def test_only_the_files_rows_are_read(db: Path) -> None:
    df, meta = _read(db, files=["new"])
    assert meta["rows"] == len(df) == 1_000  # k60000..k60999, not the 60,000 rows of the earlier file
    assert meta["scope"] == "the rows of the 1 files loaded in this run"
    assert df["id"].min() == "k60000" and validate(SUITE, df)[0]


def test_a_bad_row_of_an_earlier_file_is_not_read_again(db: Path) -> None:
    # The earlier file passed when it was loaded; its rows are not the night's (the whole table still fails).
    df, _ = _read(db, "update raw.t set price = -1 where id = 'k5'", files=["new"])
    assert validate(SUITE, df)[0]
    whole, _ = _read(db, "update raw.t set price = -1 where id = 'k5'")
    assert not validate(SUITE, whole)[0]


@pytest.mark.parametrize("doctor", [
    "update raw.t set price = -1 where id = 'k60500'",  # a negative price in the new file
    "update raw.t set id = null where id = 'k60001'",  # a null key in the new file
    "update raw.t set id = 'k17' where id = 'k60002'",  # a new row repeating an earlier file's key
])
def test_a_bad_row_of_the_new_file_fails_the_suite(db: Path, doctor: str) -> None:
    df, _ = _read(db, doctor, files=["new"])
    passed, failures = validate(SUITE, df)
    assert not passed and len(failures) == 1, failures


def test_a_repeated_key_is_found_in_a_sampled_scope(db: Path) -> None:
    """Scoped to both files (61,000 rows, above the 20,000-row sample): the duplicate k17 is read
    whatever the sample holds."""
    df, meta = _read(db, "update raw.t set id = 'k17' where id = 'k60002'", files=["old", "new"])
    assert meta["rows"] == 61_000 and meta["sampled"].startswith("using sample")
    assert (df["id"] == "k17").sum() == 2
    assert not validate(SUITE, df)[0]


def test_great_expectations_loads_without_pyspark_and_leaves_it_importable() -> None:
    """GX's optional Spark support is not imported with it (pyspark is installed here for the Spark
    lane); a suite still validates, and pyspark imports afterwards as usual. In a fresh interpreter:
    this one may have loaded either already."""
    code = (
        "import sys, pandas as pd\n"
        "from warehouse.expectations import Suite, validate\n"
        "suite = Suite('t', (('ExpectColumnValuesToNotBeNull', {'column': 'id'}),))\n"
        "ok = validate(suite, pd.DataFrame({'id': [1, 2]}))[0] and not validate(suite, pd.DataFrame({'id': [1, None]}))[0]\n"
        "loaded = 'great_expectations' in sys.modules and 'pyspark' not in sys.modules and 'py4j' not in sys.modules\n"
        "import pyspark\n"
        "print(ok, loaded, pyspark.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parents[2], timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True", "pyspark"]


def test_great_expectations_defers_scipy_stats_until_it_is_used() -> None:
    """GX imports scipy.stats for expectations no suite uses; it is left unloaded (its submodules absent)
    through the import and a validation, and still works when someone reads it: norm.cdf(0) is 0.5 (the
    standard normal is symmetric about 0). In a fresh interpreter: this one may have loaded it already."""
    code = (
        "import sys, pandas as pd\n"
        "from warehouse.expectations import Suite, validate\n"
        "suite = Suite('t', (('ExpectColumnValuesToBeBetween', {'column': 'x', 'min_value': 0, 'max_value': 9}),))\n"
        "ok = validate(suite, pd.DataFrame({'x': [1, 2]}))[0] and not validate(suite, pd.DataFrame({'x': [1, 10]}))[0]\n"
        "deferred = 'great_expectations' in sys.modules and 'scipy.stats._stats_py' not in sys.modules\n"
        "from scipy import stats\n"
        "print(ok, deferred, stats.norm.cdf(0), 'scipy.stats._stats_py' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parents[2], timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True", "0.5", "True"]
