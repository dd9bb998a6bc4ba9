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
"""

from __future__ import annotations

import json
from pathlib import Path
from types import CodeType
from typing import Any

_CODE: dict[tuple, CodeType] = {}


def _settings(env: Any) -> tuple:
    """What the code Jinja generates depends on, besides the source."""
    return (type(env), tuple(sorted(env.extensions)), frozenset(env.filters), frozenset(env.tests), env.undefined,
            env.finalize, env.autoescape, env.optimized, env.is_async, env.block_start_string,
            env.block_end_string, env.variable_start_string, env.variable_end_string, env.comment_start_string,
            env.comment_end_string, env.line_statement_prefix, env.line_comment_prefix, env.trim_blocks,
            env.lstrip_blocks, env.newline_sequence, env.keep_trailing_newline)


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
    """Compile the macros and node SQL of the dbt manifest at `manifest` into the cache; how many. A source
    Jinja cannot compile is left to the command that uses it (which reports it as dbt does)."""
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
    done = 0
    for source in sources:
        if not source:
            continue
        try:
            env.compile(source)
            done += 1
        except jinja2.TemplateError:
            pass
    return done
