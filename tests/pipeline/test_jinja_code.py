"""Jinja code compiled once per process (pipelines/jinja_code.py): a template source seen before in an
environment of the same settings reuses its code and still renders with its own environment's globals;
other syntax settings get code of their own; a source that does not compile still fails each time; the
project's manifest precompiles, and dbt's own template call then compiles nothing new."""

from __future__ import annotations

import json

import jinja2
import pytest
from dbt_common.clients.jinja import get_environment, get_template

from pipelines import jinja_code
from pipelines.dbt_parse import MANIFEST, require_manifest

SOURCE = "[[ who ]] {{ who }} pays {{ amount }}"


@pytest.fixture
def cached(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The cache installed for this test only: Jinja's own compile and an empty cache come back after."""
    monkeypatch.setattr(jinja2.Environment, "compile", jinja2.Environment.compile)
    monkeypatch.setattr(jinja_code, "_CODE", {})
    jinja_code.cache_jinja_code()
    return jinja_code._CODE


def test_one_compile_per_source_each_environment_its_own_globals(cached: dict) -> None:
    first = get_environment().from_string(SOURCE, globals={"who": "team-a", "amount": "1.50"})
    second = get_environment().from_string(SOURCE, globals={"who": "team-b", "amount": "2.25"})
    assert len(cached) == 1  # two environments of the same settings, one compile
    # the default syntax leaves "[[ who ]]" as text
    assert first.render({}) == "[[ who ]] team-a pays 1.50"
    assert second.render({}) == "[[ who ]] team-b pays 2.25"


def test_other_syntax_settings_get_code_of_their_own(cached: dict) -> None:
    default = get_environment().from_string(SOURCE, globals={"who": "team-a", "amount": "1.50"})
    brackets = get_environment()
    brackets.variable_start_string, brackets.variable_end_string = "[[", "]]"
    other = brackets.from_string(SOURCE, globals={"who": "team-a", "amount": "1.50"})
    assert len(cached) == 2
    assert default.render({}) == "[[ who ]] team-a pays 1.50"
    # with [[ ]] as the variable markers, "{{ who }}" and "{{ amount }}" are text
    assert other.render({}) == "team-a {{ who }} pays {{ amount }}"


def test_a_source_that_does_not_compile_fails_every_time(cached: dict) -> None:
    for _ in range(2):
        with pytest.raises(jinja2.TemplateSyntaxError):
            get_environment().from_string("{{ who")
    assert cached == {}


def test_the_project_precompiles_and_dbt_then_compiles_nothing_new(cached: dict) -> None:
    require_manifest()
    done = jinja_code.precompile(MANIFEST)
    # every macro of the manifest (the project's and dbt's, 700+) and every node's SQL
    assert done > 700
    assert len(cached) <= done  # equal sources share one entry
    entries = len(cached)
    macros = json.loads(MANIFEST.read_bytes())["macros"]
    column_constraints = macros["macro.gpu_ledger.test_column_constraints"]["macro_sql"]
    get_template(column_constraints, {}, None)  # how dbt compiles a macro it calls
    assert len(cached) == entries


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cache installed over a Jinja compile that records every source it really compiles."""
    compiled: list[str] = []
    original = jinja2.Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):  # noqa: ANN001
        compiled.append(source)
        return original(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    monkeypatch.setattr(jinja_code, "_CODE", {})
    jinja_code.cache_jinja_code()
    return compiled


def test_a_new_process_takes_the_projects_code_from_the_file(counted: list[str], tmp_path, monkeypatch) -> None:
    require_manifest()
    manifest = tmp_path / "manifest.json"
    manifest.write_bytes(MANIFEST.read_bytes())
    done = jinja_code.precompile(manifest)
    assert len(counted) > 700 and (tmp_path / jinja_code.CODE_FILE).is_file()
    macro = json.loads(manifest.read_bytes())["macros"]["macro.gpu_ledger.decimal_text"]["macro_sql"]
    fresh = get_template(macro, {}, None).module.dbt_macro__decimal_text("amount_2026")
    # what a new process has: an empty cache; every source now comes from the file, none is compiled
    monkeypatch.setattr(jinja_code, "_CODE", {})
    counted.clear()
    assert jinja_code.precompile(manifest) == done
    assert counted == []
    loaded = get_template(macro, {}, None).module.dbt_macro__decimal_text("amount_2026")
    assert counted == [] and str(loaded) == str(fresh) and "amount_2026" in str(loaded)


def test_a_file_that_does_not_load_is_compiled_again_and_replaced(counted: list[str], tmp_path) -> None:
    require_manifest()
    manifest = tmp_path / "manifest.json"
    manifest.write_bytes(MANIFEST.read_bytes())
    code_file = tmp_path / jinja_code.CODE_FILE
    code_file.write_bytes(b"\x00 not marshal")
    done = jinja_code.precompile(manifest)
    assert done > 700 and len(counted) > 700  # every distinct source compiled, as without a file
    assert len(jinja_code._read_code_file(code_file)) == len(counted)  # and the file written anew
