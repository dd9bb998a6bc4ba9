"""Discovers every `SourceFormat` under `sources/<family>/` and recognises files by content.

Adding a format means adding a module that defines `FORMATS = [...]`; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import zipfile
from functools import cache
from pathlib import Path

import sources
from sources.common import SourceFormat, head_text, read_head, wide_text_encoding

FAMILIES = ("billing", "usage", "benchmarks", "api_spend", "prices", "registry", "fx")


@cache
def all_formats() -> tuple[SourceFormat, ...]:
    """Every format defined in `sources.<family>.<module>.FORMATS`, in a stable order."""
    found: list[SourceFormat] = []
    for family in FAMILIES:
        try:
            pkg = importlib.import_module(f"sources.{family}")
        except ModuleNotFoundError:
            continue
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
            module = importlib.import_module(f"sources.{family}.{info.name}")
            found.extend(getattr(module, "FORMATS", []))
    return tuple(found)


def formats_for(family: str) -> list[SourceFormat]:
    """Formats of one family (the input folder name)."""
    return [f for f in all_formats() if f.family == family]


def recognise(path: Path, family: str) -> SourceFormat | None:
    """The first format of `family` whose `detect` accepts this file, else None."""
    head = read_head(path)
    return next((fmt for fmt in formats_for(family) if _detects(fmt, path, head)), None)


def _detects(fmt: SourceFormat, path: Path, head: bytes) -> bool:
    try:
        return bool(fmt.detect(path, head))
    except Exception:  # a detector that trips on odd bytes simply does not match
        return False


def unrecognised_reason(path: Path, family: str) -> str:
    """Why no format of `family` recognised this file and what would make it readable, as a clause for its
    quarantine reason; "" when nothing more is known. In order: a UTF-16/32 byte order mark, a workbook or an
    archive other than gzip, Excel's `sep=,` line before the header (all three any family's), a format of the
    family that knows this near miss (`SourceFormat.near_miss`), a format of another family that reads it (the
    file is in the wrong folder: it is not loaded there, the folder names the family)."""
    head = read_head(path)
    wide = wide_text_encoding(head)
    if wide:
        return f"it is {wide} text, from its byte order mark: save it as UTF-8"
    packed = _packed_reason(path, head)
    if packed:
        return packed
    first = head_text(head).split("\n", 1)[0].strip()
    if re.fullmatch(r"(?i)sep=.", first):  # Excel's delimiter hint, before the header
        return f"its first line is Excel's delimiter hint `{first}`, not the header: delete that line"
    for fmt in formats_for(family):
        hint = fmt.near_miss(path, head) if fmt.near_miss is not None else None
        if hint:
            return hint
    for fmt in all_formats():
        if fmt.family != family and _detects(fmt, path, head):
            return f"it reads as {fmt.name} ({fmt.family} data): put it in the inputs' {fmt.family}/ folder"
    return ""


# Containers no reader opens, by their magic bytes; gzip is read as it is (sources/common.py `open_bytes`).
_COMPRESSED = ((b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"7z\xbc\xaf\x27\x1c", "7z"))
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Excel 97-2003 workbooks (.xls)


def _packed_reason(path: Path, head: bytes) -> str | None:
    """What a workbook or a non-gzip archive is and how to hand it over; None for anything else. AWS's
    legacy Cost and Usage Report can be delivered as ZIP, and cost reports are often saved from Excel."""
    if head.startswith(_OLE2):
        return "it is an Excel 97-2003 workbook (.xls): save the sheet as CSV UTF-8"
    for magic, kind in _COMPRESSED:
        if head.startswith(magic):
            return f"it is {kind}-compressed: decompress it, or compress it with gzip (read as it is)"
    if not head.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            names = [i.filename for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError):
        return "it is a damaged ZIP archive"
    if "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names):
        return "it is an Excel workbook (.xlsx): save the sheet as CSV UTF-8"
    listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (f"it is a ZIP archive ({len(names)} file{'s' if len(names) != 1 else ''}: {listed or 'empty'}): unzip it "
            "into this folder, or compress each file with gzip (read as it is)")


_ = sources  # the package import anchors discovery
