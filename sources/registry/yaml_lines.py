"""YAML loading that remembers the line of every mapping, so errors can name file, line and field.

Every YAML file the ledger reads from an inputs folder or config/ (registry files, quotes sheets,
fetch and page configuration) goes through `load_yaml` / `load_yaml_text`. They refuse anchors and
aliases outright: an alias repeats a node without copying its bytes, so nested aliases (the
"billion laughs") turn a few hundred bytes into gigabytes while the loader builds them. No
registry or config file needs them (write the value again), and a bound on expansion would still
let a file cost many times its size; refusing every alias keeps a document's size its cost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sources.common import UnreadableFile

ALIAS_REFUSED = ("YAML anchors and aliases are not accepted in registry and config files "
                 "(an alias can expand a few bytes into gigabytes): write the value out")


class LineMap(dict):
    """A dict that also knows the 1-based line of itself (`__line__`) and of each key."""

    line: int = 0
    key_lines: dict[str, int]


class _AliasRefused(yaml.MarkedYAMLError):
    pass


class _Loader(yaml.SafeLoader):
    """SafeLoader (no Python objects) that stops at the first anchor or alias, before any expansion."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            what = f"alias *{event.anchor}" if isinstance(event, yaml.AliasEvent) else f"anchor &{event.anchor}"
            raise _AliasRefused(problem=f"{what}: {ALIAS_REFUSED}", problem_mark=event.start_mark)
        return super().compose_node(parent, index)


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


def _problem(exc: yaml.YAMLError) -> tuple[int | None, str]:
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark else None
    if isinstance(exc, _AliasRefused):
        return line, str(exc.problem)
    return line, f"invalid YAML: {getattr(exc, 'problem', None) or exc}"


def load_yaml_text(text: str, path: Path) -> Any:
    """Parse YAML text read from `path` (named in errors): a syntax error or an anchor/alias raises
    UnreadableFile with its line. Mappings are `LineMap`s (see `line_of`)."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        line, problem = _problem(exc)
        raise UnreadableFile(path, line, problem) from exc


def compose_yaml_text(text: str, path: Path) -> yaml.Node | None:
    """The node tree of YAML text (for callers that need each node's line), refusing aliases likewise."""
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        line, problem = _problem(exc)
        raise UnreadableFile(path, line, problem) from exc


def load_yaml(path: Path) -> Any:
    """Parse a YAML file (see `load_yaml_text`); text that is not UTF-8 raises UnreadableFile."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, None, f"not UTF-8 text: {exc.reason}") from exc
    return load_yaml_text(text, path)


def line_of(obj: Any, key: str | None = None) -> int | None:
    """Line of a mapping (or of one of its keys) loaded by `load_yaml`."""
    if isinstance(obj, LineMap):
        return obj.key_lines.get(key, obj.line) if key else obj.line
    return None
