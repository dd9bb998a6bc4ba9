"""What a refresh would start from, and whether the last one that built started from the same.

A nightly refresh rebuilds from its inputs and the project's code; when neither changed since the
last refresh that built and published, a rebuild would publish the same tables again (241 dbt nodes,
~27 s at 256 GPUs x 30 days). `current_state` describes what a refresh would start from without
importing Dagster or dbt (a fraction of a second when nothing changed):

- `families`: per source family, the sha256 over the sorted content hashes of its input files and
  its refused inputs, learnt by landing them (content-addressed, each new byte read once): a file
  renamed, or touched with the same bytes, is no new data (its stat changed, so it is read again:
  the one read it costs); new bytes, a new file or a file gone are a change.
- `code`: the sha256 of every file that shapes the build (dbt project, contracts, suites, the
  pipeline's and parsers' Python, the fetch configuration): a code change rebuilds everything.
- `month`: the UTC month. A mart compares a billing period with `current_date` (month-end
  forecast), so the first refresh of a new month rebuilds even without new data.
- `fetching`: a provider endpoint is enabled in the fetch configuration; a fetch may bring new data
  that only the run can see, so such a home always runs.

The state is kept in `HOME/last_refresh.json` (`built_from`) by the refresh that built from it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from sources.catalog import FAMILIES
from warehouse.home import REPO_ROOT, Home
from warehouse.landing import land_inputs
from warehouse.landing_io import LandingWriteError
from warehouse.status import read_status

STATE_KEY = "built_from"
# What shapes a build besides the inputs (under the repository). warehouse/home is a default home.
CODE_DIRS = ("dbt/models", "dbt/macros", "dbt/seeds", "dbt/tests", "warehouse", "pipelines", "sources", "reference",
             "config")
CODE_FILES = ("dbt/dbt_project.yml", "dbt/profiles.yml")
CODE_SUFFIXES = frozenset({".py", ".sql", ".yml", ".yaml", ".csv", ".json"})
SKIPPED_DIRS = frozenset({"home", "__pycache__", "target", "logs"})
FETCH_CONFIGS = ("price_sources.yaml", "api_spend_sources.yaml", "fx_sources.yaml")


@dataclass(frozen=True)
class RefreshState:
    """What a refresh starts from (see the module doc)."""

    families: dict[str, str]
    code: str
    month: str
    engine: str
    files: int = 0
    fetching: list[str] = field(default_factory=list)

    def same_build(self, other: dict[str, Any] | None) -> bool:
        """True when `other` (a recorded state) would build exactly what this one builds."""
        if not other or self.fetching:
            return False
        mine = asdict(self)
        return all(mine[k] == other.get(k) for k in ("families", "code", "month", "engine"))

    def changed_families(self, other: dict[str, Any] | None) -> list[str] | None:
        """Families whose inputs differ from `other`'s; None when anything else differs (rebuild all)."""
        if not other or self.fetching or any(asdict(self)[k] != other.get(k) for k in ("code", "month", "engine")):
            return None
        before = other.get("families") or {}
        return [f for f in self.families if self.families[f] != before.get(f)]


def _code_files() -> list[Path]:
    found = [REPO_ROOT / f for f in CODE_FILES]
    for top in CODE_DIRS:
        for path in (REPO_ROOT / top).rglob("*"):
            rel = path.relative_to(REPO_ROOT).parts
            if path.suffix in CODE_SUFFIXES and not SKIPPED_DIRS.intersection(rel[1:]) and path.is_file():
                found.append(path)
    return sorted(found)


def code_key() -> str:
    """sha256 over the path and bytes of every file that shapes a build (~1 MB, milliseconds)."""
    digest = hashlib.sha256()
    for path in _code_files():
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def enabled_fetches(inputs_dir: Path) -> list[str]:
    """Names of enabled fetch endpoints (the same files pipelines/defs/ingest/fetch.py reads); an
    unreadable configuration counts as enabled, so such a home always runs and the fetch says why."""
    names = []
    for name in FETCH_CONFIGS:
        override = inputs_dir / "registry" / name
        path = override if override.is_file() else REPO_ROOT / "config" / "fetch" / name
        try:
            doc = yaml.safe_load(path.read_text()) if path.is_file() else {}
        except (OSError, yaml.YAMLError):
            names.append(f"{name} (unreadable)")
            continue
        for entry in [*((doc or {}).get("sources") or []), *((doc or {}).get("pages") or [])]:
            if isinstance(entry, dict) and entry.get("enabled"):
                names.append(str(entry.get("name") or name))
    return names


def current_state(home: Path, inputs_dir: Path, engine: str = "duckdb") -> RefreshState:
    """The state a refresh of `inputs_dir` into `home` starts from. The inputs are landed to learn it
    (warehouse/landing.py: content-addressed, so landing is what decides what is new; each new byte
    is read once, copied while hashed; an unchanged file is not read); the run's own landing step
    then finds them landed already."""
    contents: dict[str, list[str]] = {}
    files, _ = land_inputs(inputs_dir, Home(home).landing, FAMILIES, contents=contents)
    families = {f: hashlib.sha256("\n".join(contents.get(f, [])).encode()).hexdigest() for f in FAMILIES}
    return RefreshState(families=families, code=code_key(), month=datetime.now(UTC).strftime("%Y-%m"),
                        engine=engine, files=files, fetching=enabled_fetches(inputs_dir))


def state_record(state: RefreshState) -> dict[str, Any]:
    """The state as last_refresh.json keeps it."""
    return asdict(state)


@dataclass(frozen=True)
class Plan:
    """What a refresh does: nothing (`skip`), every asset (`families` None) or what `families` affect;
    `tables`: per changed family, the raw tables its new files write (pipelines/changed_sources.py)."""

    state: RefreshState | None
    last: dict[str, Any]
    skip: bool
    families: list[str] | None
    seconds: float
    tables: dict[str, list[str] | None] = field(default_factory=dict)
    failure: str = ""  # the landing folder could not be written: the refresh ends here, nothing refused


def plan_refresh(home: Path, inputs_dir: Path, engine: str, *, forced: bool) -> Plan:
    """Compare what this refresh starts from with what the last build started from (`forced`: a full
    refresh or a backfill, which builds everything). Only a refresh that finished and published is
    a base: after a failed or killed one the ledger may be half-built, so everything runs."""
    from pipelines.changed_sources import pending_tables
    from pipelines.outcome import attempt_state

    began = time.monotonic()
    paths = Home(home)
    try:
        state = current_state(home, inputs_dir, engine)
    except LandingWriteError as exc:  # the home's own disk failed, not an input
        return Plan(None, {}, False, None, time.monotonic() - began, failure=f"{exc}; no input was refused, "
                    "the next refresh lands them")
    last = read_status(home) or {}
    base = None if forced or not last.get("ok") or attempt_state(last) not in ("finished", "none") \
        or not (paths.serving_db.exists() and paths.ledger_db.exists()) else last.get(STATE_KEY)
    skip, families = state.same_build(base), state.changed_families(base)
    tables = pending_tables(home, families) if families and not skip else {}
    return Plan(state, last, skip, families, time.monotonic() - began, tables)


def affected_assets(defs: Any, families: list[str], tables: dict[str, list[str] | None] | None = None) -> list[Any]:
    """The asset keys a refresh must materialize when only `families`' inputs changed: landing, those
    families' raw loads, the models reading the raw tables their new files write (`tables`, per family:
    pipelines/changed_sources.py; a family not in it or None there: every table of the family) and
    everything downstream of them, the audit models (every loaded file changes `audit.file_loads`),
    those of their readers that read rows of a changed family (`audit_readers`) and everything
    downstream of those, and the publication with what follows it. Every other model was built from
    the same rows last time and stays as it is in the ledger; dbt's incremental models still rebuild
    exactly the days touched."""
    import dagster as dg

    from pipelines.dbt_parse import load_manifest

    manifest = load_manifest()
    graph = defs.resolve_asset_graph()
    landing = dg.AssetKey(["landing", "inputs"])
    raw = [dg.AssetKey(["raw", f]) for f in families]
    audit_models = [k for k in graph.get(landing).child_keys if k.path[0] != "raw"]
    readers = audit_readers(graph, audit_models, families, manifest.get("nodes", {}))
    changed = changed_source_ids(manifest, families, tables or {})
    table_readers = [k for r in raw for k in graph.get(r).child_keys if reads_changed(graph.get(k), manifest, changed)]
    selection = (dg.AssetSelection.assets(landing, *audit_models, *raw)
                 | dg.AssetSelection.assets(*table_readers, *readers).downstream()
                 | dg.AssetSelection.assets(dg.AssetKey(["serving", "publication"])).downstream())
    return sorted(selection.resolve(graph), key=lambda k: k.to_user_string())


def changed_source_ids(manifest: dict[str, Any], families: list[str],
                       tables: dict[str, list[str] | None]) -> set[str]:
    """dbt unique ids of the sources (raw tables) of `families` that new files write: those `tables`
    names for a family, every source of a family it does not name or names as None."""
    found = set()
    for uid, source in manifest.get("sources", {}).items():
        key = ((source.get("meta") or {}).get("dagster") or {}).get("asset_key") or []
        family = key[1] if len(key) == 2 and key[0] == "raw" else None
        if family in families and (tables.get(family) is None or source.get("name") in tables[family]):
            found.add(uid)
    return found


def reads_changed(node: Any, manifest: dict[str, Any], changed: set[str]) -> bool:
    """Whether an asset downstream of a raw load reads one of the `changed` sources; an asset that is
    not a dbt model (or is unknown to the manifest) counts as reading them all."""
    uid = node.metadata.get("dagster_dbt/unique_id")
    model = manifest.get("nodes", {}).get(str(getattr(uid, "value", uid))) if uid is not None else None
    if model is None:
        return True
    return bool(changed.intersection(model.get("depends_on", {}).get("nodes", [])))


def audit_readers(graph: Any, audit_models: list[Any], families: list[str],
                  nodes: dict[str, Any] | None = None) -> list[Any]:
    """The models reading an audit model that a change of `families` reaches. A model that declares the
    families whose audit rows it reads (dbt meta `audit_families`: a registry model reads registry
    files only) is left out when none of them changed; one that declares nothing reads them all.
    `nodes`: the dbt manifest's nodes (default: the parsed project's)."""
    from pipelines.dbt_parse import load_manifest

    if nodes is None:
        nodes = load_manifest().get("nodes", {})
    changed = set(families)
    found = []
    for key in sorted({c for k in audit_models for c in graph.get(k).child_keys}, key=lambda k: k.to_user_string()):
        uid = graph.get(key).metadata.get("dagster_dbt/unique_id")
        declared = (nodes.get(str(getattr(uid, "value", uid))) or {}).get("meta", {}).get("audit_families")
        if declared is None or changed.intersection(declared):
            found.append(key)
    return found
