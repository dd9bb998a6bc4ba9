"""GX's `Expectation.configuration`, built once per expectation while a suite validates.

great-expectations 1.x builds the property from scratch on every read (a pydantic `.dict()` of every
field, then a new `ExpectationConfiguration`), and its validator reads it once per key of each kwargs dict
it assembles (`_get_domain_kwargs`, `_get_success_kwargs`, `get_metric_kwargs`, ...). The validator makes
a fresh expectation object from its configuration for each phase (`to_domain_obj`) and does not change it
while the phase runs, so within one `validate` call the first configuration an object gave is the one
every later read would build again. `configurations_built_once` keeps it for the objects of that call
only; outside it (and in another thread's call) the property is GX's own.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

# id(expectation) -> (expectation, its configuration): the object is kept so that an id reused by a new
# object after the first was freed is never mistaken for it.
_BUILT: contextvars.ContextVar[dict[int, tuple[Any, Any]] | None] = contextvars.ContextVar(
    "gx_configurations_built", default=None)


def _install() -> None:
    """Replace `Expectation.configuration` (once per process) by a property that looks in the cache of the
    running `configurations_built_once`, if any, before building."""
    from great_expectations.expectations.expectation import Expectation

    build = Expectation.configuration.fget
    if getattr(build, "built_once", False):
        return

    def configuration(self: Any) -> Any:
        built = _BUILT.get()
        if built is None:
            return build(self)
        hit = built.get(id(self))
        if hit is None or hit[0] is not self:
            hit = built[id(self)] = (self, build(self))
        return hit[1]

    configuration.built_once = True  # type: ignore[attr-defined]
    configuration.__doc__ = build.__doc__
    Expectation.configuration = property(configuration)  # type: ignore[method-assign, assignment]


@contextlib.contextmanager
def configurations_built_once() -> Iterator[None]:
    """Within the block, each expectation object builds its configuration on its first read only."""
    _install()
    token = _BUILT.set({})
    try:
        yield
    finally:
        _BUILT.reset(token)
