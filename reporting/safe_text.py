"""Untrusted text (team, workload, tag, file names, reasons) made inert for spreadsheets and Markdown.

Names come from bill tags, registries and file names, so a hostile one can be a formula
(`=HYPERLINK("http://x","y")`) or a Markdown link. Two sinks need care:

- CSV: a spreadsheet runs a text cell that begins with =, +, -, @, tab or CR as a formula (OWASP "CSV
  injection"), so such a cell gets a leading single quote, which spreadsheets show as text. Only text is
  touched: numbers (Decimal, int, float) stay numbers, and text that is just a number ('-12.50', '-1,234.57')
  is no formula and stays as it is, so a negative amount column still loads as numbers.
- Markdown (every Streamlit text element and st.table cells render it): ASCII punctuation is backslash-escaped,
  which CommonMark shows literally, so no link, autolink, image, HTML or emphasis can form.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A plain number as text: optional sign, digits with thousands separators, optional fraction and exponent.
_NUMBER = re.compile(r"[+-]?(\d[\d,]*(\.\d+)?|\.\d+)([eE][+-]?\d+)?")
#: The same rule as a regular expression, for writers that neutralise cells in SQL (warehouse/export.py).
NUMBER_TEXT_PATTERN: str = _NUMBER.pattern
# Every ASCII punctuation character that starts or closes Markdown syntax (links, autolinks via ':', '@' and
# '.', HTML, emphasis, code, math, Streamlit directives); '-' only matters at the start (list, rule).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~$&:@.=^\"'])")


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting with = + - @ tab or CR gets a leading quote."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_row(values: Any) -> list[Any]:
    return [csv_cell(v) for v in values]


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells and column names are safe for a spreadsheet; numeric, date and boolean
    columns are left as they are (so they still load as numbers and dates)."""
    out = df.copy()
    for col in out.columns:
        series = out[col]
        if series.dtype == object or pd.api.types.is_string_dtype(series.dtype) \
                or isinstance(series.dtype, pd.CategoricalDtype):
            out[col] = series.astype(object).map(csv_cell)
    out.columns = [csv_cell(c) for c in out.columns]
    return out


def md_text(value: Any) -> str:
    """Text shown literally where Streamlit renders Markdown: punctuation escaped, line breaks as spaces."""
    text = "" if value is None else str(value)
    if _NUMBER.fullmatch(text):
        return text  # a plain number has no Markdown meaning; keep it readable
    text = _MD_SPECIAL.sub(r"\\\1", text.replace("\r", " ").replace("\n", " "))
    # Leading whitespace would indent the text into a code block (backslashes then shown): keep it as
    # character references, which count as text, not indentation.
    body = text.lstrip(" \t")
    text = "".join("&#9;" if c == "\t" else "&#32;" for c in text[:len(text) - len(body)]) + body
    return "\\" + text if text.startswith("-") else text


def md_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy for st.table (whose cells and headers are Markdown) with every text cell shown literally."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(lambda v: md_text(v) if isinstance(v, str) else v)
    out.columns = [md_text(c) if isinstance(c, str) else c for c in out.columns]
    return out
