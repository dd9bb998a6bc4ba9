"""YAML loading that remembers the line of every mapping, so errors can name file, line and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sources.common import UnreadableFile


class LineMap(dict):
    """A dict that also knows the 1-based line of itself (`__line__`) and of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineMap:
    loader.flatten_mapping(node)
    out = LineMap()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[str(key)] = key_node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: Path) -> Any:
    """Parse a YAML file; a syntax error raises UnreadableFile with the line it occurred on."""
    try:
        return yaml.load(path.read_text(encoding="utf-8-sig"), Loader=_Loader)  # noqa: S506 - safe subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise UnreadableFile(path, mark.line + 1 if mark else None, f"invalid YAML: {exc.problem}") from exc
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, None, f"not UTF-8 text: {exc.reason}") from exc


def line_of(obj: Any, key: str | None = None) -> int | None:
    """Line of a mapping (or of one of its keys) loaded by `load_yaml`."""
    if isinstance(obj, LineMap):
        return obj.key_lines.get(key, obj.line) if key else obj.line
    return None
