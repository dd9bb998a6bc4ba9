"""Jinja code compiled once per process: a dbt command compiles every macro it calls and every node's SQL
from source (dbt keeps no compiled template between commands, and a warm dbt process forks a fresh child
per command), ~1.4 CPU s for the project's 713 macros and 0.4 for its 302 nodes.

`cache_jinja_code()` keeps the code Jinja compiles from a template source, keyed by the source and by every
setting of the environment the generated code depends on (its class, extensions, filter and test names,
undefined type, finalize, autoescape, optimisation, async mode and syntax); a template source seen before in
an environment of the same settings gets the same code, which Jinja binds to the new environment and
globals as it always does (`Template.from_code`). `precompile(manifest)` compiles the project's macros and
node SQL the way dbt does (`dbt_common.clients.jinja.get_environment()`), so that a warm dbt process
(pipelines/dbt_warm.py, the test session's tests/dbt_server.py) does it before its command comes.
Jinja's own `bytecode_cache` would not serve: it caches templates loaded through a loader, and dbt
compiles every template from a string (`Environment.from_string`).

What `precompile` compiles is also kept on disk beside the manifest (`CODE_FILE`, Python's marshal
format), keyed by a digest of the source, the settings, the Python build and the versions of Jinja and
dbt-common: a refresh's warm dbt worker then takes the project's ~1,000 code objects from it in ~0.1 CPU s
instead of compiling them in ~1.2-1.3, while the refresh's own process needs both cores for its imports
and parsing. A source not in the file (the project changed, another Python, Jinja or dbt-common) is
compiled and the file written again; a file that does not load is ignored. The file holds code that
runs, like the manifest and the project beside it: it is written only by this module, into the project's
own target folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

_CODE: dict[tuple, CodeType] = {}
CODE_FILE = "jinja_code.marshal"  # beside the manifest precompile reads


def _settings(env: Any) -> tuple:
    """What the code Jinja generates depends on, besides the source."""
    return (type(env), tuple(sorted(env.extensions)), frozenset(env.filters), frozenset(env.tests), env.undefined,
            env.finalize, env.autoescape, env.optimized, env.is_async, env.block_start_string,
            env.block_end_string, env.variable_start_string, env.variable_end_string, env.comment_start_string,
            env.comment_end_string, env.line_statement_prefix, env.line_comment_prefix, env.trim_blocks,
            env.lstrip_blocks, env.newline_sequence, env.keep_trailing_newline)


def _stable(value: Any) -> str:
    """A text for one of `_settings`' values that is the same in every process (no object ids)."""
    if isinstance(value, type) or callable(value):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', type(value).__qualname__)}"
    if isinstance(value, (set, frozenset)):
        return repr(sorted(map(str, value)))
    if isinstance(value, tuple):
        return "(" + ",".join(_stable(v) for v in value) + ")"
    return repr(value)


def _versions() -> str:
    """What generated code depends on besides source and settings: Python's build (marshal's format,
    the bytecode), Jinja (its code generator) and dbt-common (its parser of `{% macro %}` blocks)."""
    import jinja2

    try:
        dbt_common = importlib.metadata.version("dbt-common")
    except importlib.metadata.PackageNotFoundError:
        dbt_common = "?"
    return f"{sys.version}\0{jinja2.__version__}\0{dbt_common}"


def _disk_key(versions_and_settings: str, source: str) -> str:
    text = f"{versions_and_settings}\0{source}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read_code_file(path: Path) -> dict[str, CodeType]:
    try:
        stored = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(stored, dict):
        return {}
    return {k: v for k, v in stored.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _write_code_file(path: Path, codes: dict[str, CodeType]) -> None:
    """Atomically (a temporary file renamed over it): another process reads the old file or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        tmp.write_bytes(marshal.dumps(codes))
        os.replace(tmp, path)
    tmp.unlink(missing_ok=True)


def cache_jinja_code() -> None:
    """Keep compiled template code for the rest of the process (see the module doc); idempotent."""
    import jinja2
    from dbt_common.clients import jinja as dbt_jinja

    original = jinja2.Environment.compile
    if getattr(original, "cached_code", None) is _CODE:
        return

    def compile(self, source, name=None, filename=None, raw=False, defer_init=False):  # noqa: A001
        # raw Python text, an AST, or dbt's macro debugging (which writes each compile's source out): as Jinja
        if raw or not isinstance(source, str) or dbt_jinja.MACRO_DEBUGGING:
            return original(self, source, name, filename, raw, defer_init)
        key = (_settings(self), source, name, filename, defer_init)
        code = _CODE.get(key)
        if code is None:
            code = _CODE[key] = original(self, source, name, filename, raw, defer_init)
        return code

    compile.cached_code = _CODE  # type: ignore[attr-defined]
    jinja2.Environment.compile = compile  # type: ignore[method-assign]


def precompile(manifest: Path) -> int:
    """Compile the macros and node SQL of the dbt manifest at `manifest` into the cache, taking the code
    kept in `CODE_FILE` beside it where it has a source's; how many. A source Jinja cannot compile is left
    to the command that uses it (which reports it as dbt does)."""
    import jinja2
    from dbt_common.clients.jinja import get_environment

    cache_jinja_code()
    try:
        data = json.loads(manifest.read_bytes())
    except (OSError, ValueError):
        return 0
    env = get_environment(None, capture_macros=False)
    sources = [m.get("macro_sql") for m in data.get("macros", {}).values()]
    sources += [n.get("raw_code") for n in data.get("nodes", {}).values()]
    code_file = manifest.with_name(CODE_FILE)
    stored = _read_code_file(code_file)
    settings = _settings(env)
    stable = _versions() + "\0" + _stable(settings)
    kept: dict[str, CodeType] = {}
    done = 0
    for source in sources:
        if not source:
            continue
        key = _disk_key(stable, source)
        code = stored.get(key)
        if code is not None:
            # the key Environment.from_string -> compile(source) looks up (name, filename None; no defer)
            _CODE.setdefault((settings, source, None, None, False), code)
        else:
            try:
                env.compile(source)
            except jinja2.TemplateError:
                continue
            code = _CODE[(settings, source, None, None, False)]
        kept[key] = code
        done += 1
    if kept.keys() != stored.keys():  # a source new or gone since the file was written
        _write_code_file(code_file, kept)
    return done
