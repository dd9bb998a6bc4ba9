"""dbt's per-node Jinja contexts and empty result tables, built with less Python.

dbt builds a context for every node it compiles, every node it runs and every adapter macro it calls
(several per node), and each context binds every macro of the manifest to itself: 718 macros here, one
`MacroGenerator` each, three constructor calls deep. The context is then flattened into the dict Jinja
renders with by looking every name up again through five namespaces (`ManifestContext.to_dict`).
`fast_macro_namespaces` builds the same namespace and the same flat dict with dict operations.

Every statement dbt runs without fetching its rows returns `agate.Table(rows=[])`, and that empty table
builds agate's default type tester (a parsedatetime calendar each) to type no column; every fetched result
builds a type tester of its own. `shared_type_testers` keeps one per thread for each set of arguments
(a tester holds a calendar whose parse state is not thread-safe, so no two threads share one).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

_LOCAL = threading.local()


def fast_macro_namespaces() -> None:
    """Replace `MacroNamespaceBuilder.build_namespace` and `ManifestContext.to_dict` (once per process) with
    versions that give the same namespace and the same flat context: every package's macros bound to the
    context (a `MacroGenerator` with the context, node and macro stack dbt's would have); a name resolves to
    the node's own package's macro first, then the root package's, then the internal packages' (the adapter's
    before dbt's); other packages' macros only through their package's name."""
    from dbt.clients.jinja import MacroGenerator
    from dbt.context.macro_resolver import TestMacroNamespace
    from dbt.context.macros import MacroNamespace, MacroNamespaceBuilder
    from dbt.context.manifest import ManifestContext

    if getattr(MacroNamespaceBuilder.build_namespace, "fast", False):
        return
    new = MacroGenerator.__new__

    def build_namespace(self: MacroNamespaceBuilder, macros_by_package: dict[str, dict[str, Any]],
                        ctx: dict[str, Any]) -> MacroNamespace:
        node, stack = self.node, self.thread_ctx
        for package, macros in macros_by_package.items():
            bound: dict[str, MacroGenerator] = {}
            for name, macro in macros.items():
                # MacroGenerator(macro, ctx, node, stack) without its three __init__ calls: the same four fields
                generator = new(MacroGenerator)
                generator.context, generator.macro, generator.node, generator.stack = ctx, macro, node, stack
                bound[name] = generator
            if package in self.internal_package_names:
                self.internal_packages[package] = bound
            else:
                self.packages[package] = bound
                if package == self.search_package:
                    self.locals.update(bound)
                elif package == self.root_package:
                    self.globals.update(bound)
        flat: dict[str, MacroGenerator] = {}
        for package in reversed(self.internal_package_names_order):  # the first listed wins
            flat.update(self.internal_packages.get(package, {}))
        return MacroNamespace(global_namespace=self.globals, local_namespace=self.locals,
                              global_project_namespace=flat, packages=self.packages)

    def to_dict(self: ManifestContext) -> dict[str, Any]:
        dct = super(ManifestContext, self).to_dict()
        namespace = self.namespace
        if type(namespace) is MacroNamespace:
            dct.update(flat_namespace(namespace))
        elif isinstance(namespace, TestMacroNamespace):
            dct.update(namespace.local_namespace)
            dct.update(namespace.project_namespace)
        else:
            dct.update(namespace)
        return dct

    build_namespace.fast = True  # type: ignore[attr-defined]
    build_namespace.original = MacroNamespaceBuilder.build_namespace  # type: ignore[attr-defined]
    to_dict.original = ManifestContext.to_dict  # type: ignore[attr-defined]
    MacroNamespaceBuilder.build_namespace = build_namespace  # type: ignore[method-assign]
    ManifestContext.to_dict = to_dict  # type: ignore[method-assign]


def flat_namespace(namespace: Any) -> dict[str, Any]:
    """`dict(namespace)` of a dbt `MacroNamespace`, by dict updates: each name resolved as its `__getitem__`
    resolves it (the first of its search order's namespaces that holds the name), so the namespaces are
    applied last to first."""
    flat: dict[str, Any] = {}
    for layer in reversed(list(namespace._search_order())):
        flat.update(layer)
    return flat


def shared_type_testers() -> None:
    """Replace dbt_common's `build_type_tester` and `empty_table` (once per process) with versions that keep
    one result per thread and arguments: the same types, the same forced text columns, the same empty
    table (agate tables are immutable)."""
    import agate
    from dbt_common.clients import agate_helper

    if getattr(agate_helper.build_type_tester, "shared", False):
        return
    build = agate_helper.build_type_tester

    def build_type_tester(text_columns: Iterable[str],
                          string_null_values: Iterable[str] | None = ("null", "")) -> agate.TypeTester:
        key = (tuple(sorted(text_columns)), None if string_null_values is None else tuple(string_null_values))
        testers = _thread_cache("testers")
        if key not in testers:
            testers[key] = build(key[0], string_null_values=string_null_values)
        return testers[key]

    def empty_table() -> agate.Table:
        cache = _thread_cache("empty")
        if "table" not in cache:
            cache["table"] = agate.Table(rows=[])
        return cache["table"]

    build_type_tester.shared = True  # type: ignore[attr-defined]
    build_type_tester.original = build  # type: ignore[attr-defined]
    agate_helper.build_type_tester = build_type_tester
    agate_helper.empty_table = empty_table


def _thread_cache(name: str) -> dict:
    cache = getattr(_LOCAL, name, None)
    if cache is None:
        cache = {}
        setattr(_LOCAL, name, cache)
    return cache
