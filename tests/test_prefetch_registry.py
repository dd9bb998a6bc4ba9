"""Every fixture that asks tests/prefetch.py for a job is registered under its own name in FIXTURES.

An unregistered fixture still gets its value (`result` queues the job late), but its module is then
taken for a light one: the job is neither queued when the session starts nor run in a worker, and the
pytest process builds it itself in the middle of the light tests (the usage chain's seven refreshes did).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests import prefetch_plan

TESTS = Path(__file__).resolve().parent


def _asks(func: ast.FunctionDef) -> list[str]:
    """The job names (or, for an f-string, its constant prefix + '*') `func` passes to prefetch.result."""
    names = []
    for node in ast.walk(func):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "result"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "prefetch" and node.args):
            arg = node.args[0]
            if isinstance(arg, ast.Constant):
                names.append(arg.value)
            elif isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
                names.append(arg.values[0].value + "*")
    return names


def test_every_fixture_asking_for_a_job_is_registered_under_its_name() -> None:
    seen, wrong = 0, []
    for path in sorted(TESTS.rglob("*.py")):
        for func in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(func, ast.FunctionDef):
                continue
            for name in _asks(func):
                seen += 1
                registered = prefetch_plan.FIXTURES.get(func.name, ())
                registered = (registered,) if isinstance(registered, str) else registered
                ok = (any(r.startswith(name[:-1]) for r in registered) if name.endswith("*")
                      else name in registered)
                if not ok:
                    wrong.append(f"{path.relative_to(TESTS)}::{func.name} asks for {name!r}, FIXTURES has {registered}")
    assert seen > 30, seen  # the walk found the fixtures (36 when this was written)
    assert wrong == [], wrong
    # And every registered job exists.
    jobs = {j for v in prefetch_plan.FIXTURES.values() for j in ((v,) if isinstance(v, str) else v)}
    assert jobs <= set(prefetch_plan.JOBS), jobs - set(prefetch_plan.JOBS)
