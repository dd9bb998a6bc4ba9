"""dbt's events that no logger would write are not formatted, and a behaviour flag's source is named cheaply.

dbt (dbt_common's `EventManager.fire_event`) turns every event into its protobuf message and, for each
logger, into its JSON line, and only then does the logger's Python `logging.Logger` drop the line below
its level. A build at the default `--log-level info` (with `--log-level-file none`, as the pipeline runs
it) formats every debug event that way for nothing: each SQL statement twice (the query and its status),
each cache action, each connection's use. `skip_unlogged_events` returns before that work for an event
that no logger is enabled for and that no callback besides dbt's own usage tracker would see.
"""

from __future__ import annotations

import logging
import sys
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


def cheap_flag_sources() -> None:
    """Name a behaviour flag's source from the callers' frames' module names (once per process).

    dbt registers its adapter anew for every command, and each of the adapter's behaviour flags is
    given a source for the warning it may fire (`BehaviorFlagRendered._default_source`, evaluated even
    when the flag names its own): the first calling module outside dbt_common's behaviour flags, found
    through `inspect.stack()`, which reads a line of source for every frame of the stack. That was 0.10 s
    of a build command's start (py-spy of the refresh's dbt worker). The same frames give the same source
    without reading any file: a frame's module is the one loaded from its code's file (`inspect.getmodule`
    finds it by that file too); a frame of code without one (`exec` of a string) is passed over, as there."""
    from dbt_common import behavior_flags

    rendered = behavior_flags.BehaviorFlagRendered
    if getattr(rendered._default_source, "walks_frames", False):
        return
    original = rendered._default_source

    def _default_source() -> str:
        frame = sys._getframe(1)
        while frame is not None:
            name = frame.f_globals.get("__name__")
            module = sys.modules.get(name) if isinstance(name, str) else None
            if module is not None and name != behavior_flags.__name__ \
                    and getattr(module, "__file__", None) == frame.f_code.co_filename:
                return str(name)
            frame = frame.f_back
        return "Unknown"

    _default_source.walks_frames = True  # type: ignore[attr-defined]
    _default_source.original = original  # type: ignore[attr-defined]
    rendered._default_source = staticmethod(_default_source)  # type: ignore[method-assign]


def lazy_event_messages() -> None:
    """Build a dbt event's protobuf message when something first reads it, not when the event is made
    (once per process).

    dbt makes an event object for every SQL statement, connection and cache action, with the node's info, and
    `BaseEvent.__init__` converts its fields to the protobuf message with protobuf's pure-Python `ParseDict`.
    Most of these are debug events that `skip_unlogged_events` then drops unread. Here the constructor keeps
    its arguments and the message (`pb_msg`) is built from them, by dbt's own constructor, on first read: by
    the logger that writes the event, a callback, or a field read such as `e.node_info`. A field written
    before that (BaseEvent's `__setattr__` writes into the message) builds it first."""
    from dbt_common.events.base_types import BaseEvent

    if isinstance(BaseEvent.__dict__.get("pb_msg"), property):
        return
    build = BaseEvent.__init__

    def __init__(self: BaseEvent, *args: Any, **kwargs: Any) -> None:
        self.__dict__["_pending"] = (args, kwargs)

    def get_message(self: BaseEvent) -> Any:
        state = self.__dict__
        if "_pb_msg" not in state:
            args, kwargs = state.pop("_pending")
            build(self, *args, **kwargs)  # dbt's own: sets pb_msg (the setter below), or warns and sets an empty one
        return state["_pb_msg"]

    def set_message(self: BaseEvent, value: Any) -> None:
        self.__dict__.pop("_pending", None)
        self.__dict__["_pb_msg"] = value

    BaseEvent.pb_msg = property(get_message, set_message)  # type: ignore[attr-defined]
    BaseEvent.__init__ = __init__  # type: ignore[method-assign]
    BaseEvent.__init__.original = build  # type: ignore[attr-defined]


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
