"""pipelines/dbt_contexts.py: dbt's macro namespaces and result tables, built faster, must be the same ones.

The namespace builder and the flattening are compared with dbt's own code on packages whose macro names
collide in every way the lookup order decides (the node's package, the root package, another package, dbt's
and an adapter's); the type testers and empty tables with dbt_common's own, on rows that type differently.
Every dbt command of the suite (each refresh's build) runs with them as well.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import agate
import pytest
from dbt.clients.jinja import MacroGenerator, MacroStack
from dbt.context.macros import MacroNamespaceBuilder
from dbt_common.clients import agate_helper

from pipelines.dbt_contexts import fast_macro_namespaces, flat_namespace, shared_type_testers

# package -> macro names. `shared` is in all five packages, `dispatch_me` in dbt and the adapter, `root_only`
# in the root package alone; the node lives in `other_pkg`.
PACKAGES = {
    "dbt": ["shared", "dispatch_me", "dbt_only"],
    "dbt_duckdb": ["shared", "dispatch_me", "adapter_only"],
    "gpu_ledger": ["shared", "root_only", "root_and_node"],
    "other_pkg": ["shared", "root_and_node", "node_only"],
    "third_pkg": ["shared", "third_only"],
}


def _macros() -> dict[str, dict[str, SimpleNamespace]]:
    return {pkg: {name: SimpleNamespace(name=name, package_name=pkg, unique_id=f"macro.{pkg}.{name}")
                  for name in names} for pkg, names in PACKAGES.items()}


def _build(original: bool, search_package: str) -> tuple[object, dict, MacroStack, object]:
    fast_macro_namespaces()
    build = MacroNamespaceBuilder.build_namespace
    build = build.original if original else build  # type: ignore[attr-defined]
    stack, node, ctx = MacroStack(), SimpleNamespace(name="a_node"), {"ctx": True}
    builder = MacroNamespaceBuilder("gpu_ledger", search_package, stack, ["dbt_duckdb", "dbt"], node)
    return build(builder, _macros(), ctx), ctx, stack, node


def _resolved(mapping: dict, ctx: dict, stack: MacroStack, node: object) -> dict[str, object]:
    """Each name's macro, or for a package name its macros; asserts every generator is bound as dbt binds it."""
    out: dict[str, object] = {}
    for key, value in mapping.items():
        if isinstance(value, MacroGenerator):
            assert value.context is ctx and value.stack is stack and value.node is node, key
            assert set(vars(value)) == {"context", "macro", "node", "stack"}, vars(value)
            out[key] = value.macro.unique_id
        else:
            out[key] = _resolved(value, ctx, stack, node)
    return out


@pytest.mark.parametrize("search_package", ["other_pkg", "gpu_ledger", "dbt"])
def test_the_namespace_resolves_every_name_as_dbts(search_package: str) -> None:
    fast, *bound = _build(False, search_package)
    slow, *slow_bound = _build(True, search_package)
    # dbt's own lookup (MacroNamespace.__getitem__ over its keys) on both namespaces
    assert _resolved({k: fast[k] for k in fast}, *bound) == _resolved({k: slow[k] for k in slow}, *slow_bound)
    assert _resolved(fast.packages, *bound) == _resolved(slow.packages, *slow_bound)
    assert _resolved(fast.global_project_namespace, *bound) == _resolved(slow.global_project_namespace, *slow_bound)
    if search_package == "other_pkg":  # by hand: the node's package, the root, then the adapter's before dbt's
        resolved = {k: fast[k].macro.unique_id for k in fast if isinstance(fast[k], MacroGenerator)}
        assert resolved == {"shared": "macro.other_pkg.shared", "root_and_node": "macro.other_pkg.root_and_node",
                            "node_only": "macro.other_pkg.node_only", "root_only": "macro.gpu_ledger.root_only",
                            "dispatch_me": "macro.dbt_duckdb.dispatch_me", "dbt_only": "macro.dbt.dbt_only",
                            "adapter_only": "macro.dbt_duckdb.adapter_only"}
        assert "third_only" not in resolved  # another package's macro only by its package name
        assert fast["third_pkg"]["third_only"].macro.unique_id == "macro.third_pkg.third_only"


@pytest.mark.parametrize("search_package", ["other_pkg", "gpu_ledger"])
def test_the_flat_context_equals_dbts_flattening(search_package: str) -> None:
    namespace, *bound = _build(False, search_package)
    expected = {key: namespace[key] for key in namespace}  # what dbt's dict.update(namespace) gives
    flat = flat_namespace(namespace)
    assert flat.keys() == expected.keys()
    assert all(flat[key] is expected[key] for key in expected)
    assert flat["shared"].macro.unique_id == f"macro.{search_package}.shared"


def test_type_testers_are_kept_per_thread_and_type_alike() -> None:
    shared_type_testers()
    patched = agate_helper.build_type_tester
    original = patched.original  # type: ignore[attr-defined]
    assert patched(["a"], string_null_values=()) is patched(["a"], string_null_values=())
    assert patched(["a"], string_null_values=()) is not patched(["b"], string_null_values=())
    assert patched(["a"]) is not patched(["a"], string_null_values=())  # the null strings are part of the key
    other: list[object] = []
    thread = threading.Thread(target=lambda: other.append(patched(["a"], string_null_values=())))
    thread.start()
    thread.join()
    assert other[0] is not patched(["a"], string_null_values=())  # a parse calendar is not shared
    rows = [("1", "2025-04-01", "true", "null", "007"), ("2", "2025-04-02", "false", "", "010")]
    names = ["n", "d", "b", "x", "code"]
    for text, nulls in (([], ("null", "")), (["code"], ()), (["code", "x"], ())):
        mine = agate.Table(rows, names, column_types=patched(text, string_null_values=nulls))
        theirs = agate.Table(rows, names, column_types=original(text, string_null_values=nulls))
        assert [type(t) for t in mine.column_types] == [type(t) for t in theirs.column_types]
        assert [tuple(r) for r in mine.rows] == [tuple(r) for r in theirs.rows]
    # by hand: the text-only column stays text ('007', not 7), the others are typed (1, a date, True)
    typed = agate.Table(rows, names, column_types=patched(["code"], string_null_values=()))
    assert typed.rows[0]["code"] == "007" and typed.rows[0]["b"] is True and str(typed.rows[0]["n"]) == "1"
    assert str(typed.rows[1]["d"]) == "2025-04-02"
    empty = agate_helper.empty_table()
    assert empty is agate_helper.empty_table() and len(empty.rows) == 0 and len(empty.columns) == 0
