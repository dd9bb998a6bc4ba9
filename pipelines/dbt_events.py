"""dbt's events that no logger would write are not formatted.

dbt (dbt_common's `EventManager.fire_event`) turns every event into its protobuf message and, for each
logger, into its JSON line, and only then does the logger's Python `logging.Logger` drop the line below
its level. A build at the default `--log-level info` (with `--log-level-file none`, as the pipeline runs
it) formats every debug event that way for nothing: each SQL statement twice (the query and its status),
each cache action, each connection's use. `skip_unlogged_events` returns before that work for an event
that no logger is enabled for and that no callback besides dbt's own usage tracker would see.
"""

from __future__ import annotations

import logging
from typing import Any

_WARN = logging.WARNING


def skip_unlogged_events() -> None:
    """Wrap `EventManager.fire_event` (once per process) so that an event below every logger's level is
    dropped before it is formatted. Warnings and errors always take dbt's own path (its warn-error
    handling sees them), and so does every event while any callback other than dbt's behaviour-change
    tracker is registered (a `dbtRunner(callbacks=...)` caller sees every event, as before)."""
    from dbt_common.events.event_manager import EventManager
    from dbt_common.events.logger import _log_level_map

    if getattr(EventManager.fire_event, "skips_unlogged", False):
        return
    fire = EventManager.fire_event
    quiet_callbacks = _quiet_callbacks()

    def fire_event(self: EventManager, e: Any, level: Any = None, node: Any = None,
                   force_warn_or_error_handling: bool = False) -> None:
        number = _log_level_map.get(level or e.level_tag(), _WARN)
        if (number < _WARN and not force_warn_or_error_handling
                and all(callback in quiet_callbacks for callback in self.callbacks)
                and not any(_enabled(logger, number) for logger in self.loggers)):
            return
        fire(self, e, level, node, force_warn_or_error_handling)

    fire_event.skips_unlogged = True  # type: ignore[attr-defined]
    EventManager.fire_event = fire_event  # type: ignore[method-assign]


def _enabled(logger: Any, number: int) -> bool:
    """Whether dbt's `logger` would write an event of level `number` (its Python logger decides)."""
    python_logger = getattr(logger, "_python_logger", None)
    return python_logger is not None and python_logger.isEnabledFor(number)


def _quiet_callbacks() -> tuple[Any, ...]:
    """Callbacks dbt registers itself that act on warnings only (dbt.tracking: BehaviorChangeEvent)."""
    try:
        from dbt.tracking import track_behavior_change_warn
    except ImportError:
        return ()
    return (track_behavior_change_warn,)
