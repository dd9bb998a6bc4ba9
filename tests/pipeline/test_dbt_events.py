"""dbt events no logger writes are dropped before they are formatted (pipelines/dbt_events.py), and
every event a logger or a caller's callback would see still reaches it."""

from __future__ import annotations

import inspect
import io

import pytest
from dbt_common.events import event_manager as manager_module
from dbt_common.events.base_types import EventLevel
from dbt_common.events.event_manager import EventManager
from dbt_common.events.logger import LineFormat, LoggerConfig
from dbt_common.events.types import Note, SystemExecutingCmd

from pipelines.dbt_events import cheap_flag_sources, lazy_event_messages, skip_unlogged_events


@pytest.fixture
def formatted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the events dbt turned into messages (its `msg_from_base_event`), in order."""
    skip_unlogged_events()
    seen: list[str] = []
    original = manager_module.msg_from_base_event

    def counting(event, level=None):
        seen.append(type(event).__name__)
        return original(event, level=level)

    monkeypatch.setattr(manager_module, "msg_from_base_event", counting)
    return seen


def _manager(level: EventLevel) -> tuple[EventManager, io.StringIO]:
    stream = io.StringIO()
    events = EventManager()
    events.add_logger(LoggerConfig(name=f"test-{level.value}", line_format=LineFormat.Json, level=level,
                                   output_stream=stream))
    return events, stream


def test_a_debug_event_below_every_logger_is_never_formatted(formatted: list[str]) -> None:
    events, stream = _manager(EventLevel.INFO)
    events.fire_event(SystemExecutingCmd(cmd=["select", "1"]))
    events.fire_event(Note(msg="kept"))
    assert formatted == ["Note"]  # without the wrapper dbt formats both and drops the first
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and '"kept"' in lines[0]


def test_a_debug_logger_still_gets_debug_events(formatted: list[str]) -> None:
    events, stream = _manager(EventLevel.DEBUG)
    events.fire_event(SystemExecutingCmd(cmd=["select", "1"]))
    assert formatted == ["SystemExecutingCmd"]
    assert "select 1" in stream.getvalue()


def test_a_callers_callback_sees_every_event(formatted: list[str]) -> None:
    events, _ = _manager(EventLevel.INFO)
    heard: list[str] = []
    events.add_callback(lambda msg: heard.append(msg.info.name))
    events.fire_event(SystemExecutingCmd(cmd=["select", "1"]))
    assert heard == ["SystemExecutingCmd"] and formatted == ["SystemExecutingCmd"]


def test_a_debug_event_raised_to_info_is_written(formatted: list[str]) -> None:
    events, stream = _manager(EventLevel.INFO)
    events.fire_event(SystemExecutingCmd(cmd=["select", "2"]), level=EventLevel.INFO)
    assert formatted == ["SystemExecutingCmd"] and "select 2" in stream.getvalue()


def test_wrapping_twice_wraps_once() -> None:
    skip_unlogged_events()
    wrapped = EventManager.fire_event
    skip_unlogged_events()
    assert EventManager.fire_event is wrapped and getattr(wrapped, "skips_unlogged", False)


def _flag_source() -> str:
    """The source dbt gives a behaviour flag created here (a module of its own, as an adapter's impl is)."""
    from dbt_common.behavior_flags import BehaviorFlagRendered

    flag = BehaviorFlagRendered({"name": "probe_flag", "default": False, "description": "a probe"}, {})
    return flag._behavior_change_event.flag_source


def _called_here(source) -> str:
    return source()


def test_a_behaviour_flag_is_named_after_its_module_without_reading_the_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    from dbt_common.behavior_flags import BehaviorFlagRendered

    cheap_flag_sources()
    cheap, original = BehaviorFlagRendered._default_source, BehaviorFlagRendered._default_source.original
    # dbt's own lookup (inspect.stack()) and the frames' modules name the same caller: this module
    assert _called_here(original) == _called_here(cheap) == __name__ == "tests.pipeline.test_dbt_events"
    # code run from a string has no module file: both pass over its frame to the function that ran it
    ran: dict = {}
    exec(compile("found = (cheap(), original())", "<string>", "exec"),  # noqa: S102
         {"cheap": cheap, "original": original, "__name__": "probe"}, ran)
    assert ran["found"] == (__name__, __name__)
    # a flag dbt creates is named so, without reading the stack
    monkeypatch.setattr(inspect, "stack", lambda *a, **k: pytest.fail("inspect.stack() was called"))
    assert _flag_source() == __name__


def _built(event: object) -> bool:
    return "_pb_msg" in vars(event)


def test_an_events_message_is_built_when_first_read_and_equals_dbts() -> None:
    from dbt.adapters.events.types import SQLQuery
    from dbt_common.events.base_types import BaseEvent

    lazy_event_messages()
    eager = object.__new__(SQLQuery)
    BaseEvent.__init__.original(eager, conn_name="master", sql="select 1", node_info={"node_name": "fct_x"})
    event = SQLQuery(conn_name="master", sql="select 1", node_info={"node_name": "fct_x"})
    assert not _built(event)  # nothing read yet: protobuf's ParseDict has not run
    assert event.sql == "select 1" and _built(event)  # a field read builds it, with dbt's own constructor
    assert event.to_json() == eager.to_json() and event.node_info.node_name == "fct_x"
    written = SQLQuery(conn_name="master", sql="select 2", node_info={})
    written.conn_name = "other"  # a write goes into the message: built first, so no field is lost
    assert written.sql == "select 2" and written.conn_name == "other"


def test_a_dropped_debug_event_is_never_built_and_a_written_one_is(formatted: list[str]) -> None:
    lazy_event_messages()
    events, stream = _manager(EventLevel.INFO)
    dropped, kept = SystemExecutingCmd(cmd=["select", "1"]), Note(msg="kept")
    events.fire_event(dropped)
    events.fire_event(kept)
    assert not _built(dropped) and _built(kept)
    assert '"kept"' in stream.getvalue()
