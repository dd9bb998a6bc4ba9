"""Fetch assets: `fetch/prices`, `fetch/fx` and `fetch/api_spend` land provider responses as received.

Which providers: `config/fetch/<name>.yaml` in the repository, replaced as a whole by
`INPUTS/registry/<name>.yaml` when that file exists (an operator enables endpoints for their
own inputs folder without editing the repository; the file is configuration, so landing skips
it). Every response body is written to a temporary file and landed content-addressed with its
URL, fetch time and HTTP status; identical bytes land nothing new, and a source that answers
`304 Not Modified` to a conditional request (its last ETag / Last-Modified) lands nothing at all.

A provider that fails (HTTP 5xx, timeout, 429 after the fetcher's own retries) is reported in
the metadata and by a WARN check. Nothing is deleted, so its last landed data stays in force,
and the run goes on. The asset-level RetryPolicy is for unexpected errors only.
"""

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import dagster as dg
import requests

from pipelines.resources import LedgerResource
from sources.api_spend import fetch as api_fetch
from sources.common import UnreadableFile
from sources.prices import fetch as price_fetch
from sources.registry.yaml_lines import load_yaml
from sources.secrets import scrub_text
from warehouse.home import REPO_ROOT
from warehouse.landing import LandedFile, land_file, read_manifest

PRICE_SOURCES = "price_sources.yaml"
FX_SOURCES = "fx_sources.yaml"
#: ETag / Last-Modified of each source's last landed response, in the home beside landing/.
VALIDATORS = "fetch_validators.json"
API_SPEND_SOURCES = "api_spend_sources.yaml"
FETCH_RETRY = dg.RetryPolicy(max_retries=2, delay=1, backoff=dg.Backoff.EXPONENTIAL)
# Query parameters that may carry a credential never reach the manifest.
_SECRET_PARAMS = {"key", "api_key", "apikey", "access_token", "token", "sig", "signature"}
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def config_file(inputs_dir: Path, name: str) -> Path:
    """INPUTS/registry/<name> when present (it replaces the repository's file), else config/fetch/<name>."""
    override = inputs_dir / "registry" / name
    return override if override.is_file() else REPO_ROOT / "config" / "fetch" / name


def public_url(url: str) -> str:
    """The URL with credential-like query values replaced by `***`."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(k.lower() in _SECRET_PARAMS for k, _ in query):
        return url  # untouched: re-encoding would change how the provider's URL reads
    query = [(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in query]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _suffix(content_type: str | None, body: bytes) -> str:
    kind = (content_type or "").lower()
    head = body.lstrip()[:1]
    if "json" in kind or head in (b"{", b"["):
        return ".json"
    if "html" in kind or head == b"<":
        return ".html"
    return ".csv" if "csv" in kind else ".txt"


@dataclass
class FetchReport:
    """What one fetch asset did, per provider, for metadata and the check."""

    config: Path
    providers: dict[str, dict[str, Any]] = field(default_factory=dict)
    landed: list[LandedFile] = field(default_factory=list)
    files_new: int = 0

    @property
    def failures(self) -> dict[str, str]:
        return {n: p["error"] for n, p in self.providers.items() if p["status"] == "failed"}

    def land(self, tmp: Path, body: bytes, name: str, family: str, ledger: LedgerResource,
             known: dict, *, origin: str, fetched_at: datetime, status: int) -> bool:
        path = tmp / name
        path.write_bytes(body)
        try:
            row, new = land_file(path, family, ledger.landing_dir, origin=origin,
                                 observed_at=fetched_at, http_status=status, known=known)
        finally:
            path.unlink()
        self.landed.append(row)
        self.files_new += int(new)
        return new

    def unreadable_config(self, key: dg.AssetKey, exc: UnreadableFile):
        """A config that cannot be read (bad YAML, an alias) fetches nothing and fails the check; the
        asset itself succeeds, so the landed inputs of its family still load."""
        self.providers["config"] = {"status": "failed", "error": scrub_text(str(exc))}
        yield from self.outputs(key, f"fetch config unreadable, nothing fetched: {scrub_text(str(exc))}")

    def outputs(self, key: dg.AssetKey, nothing: str | None = None):
        failures = self.failures
        metadata: dict[str, Any] = {
            "config": str(self.config),
            "providers": dg.MetadataValue.json(self.providers),
            "files_fetched": len(self.landed), "files_new": self.files_new,
            "failed_providers": "\n".join(f"{n}: {e}" for n, e in failures.items()) or "none",
        }
        if nothing:
            metadata["status"] = nothing
        yield dg.MaterializeResult(metadata=metadata)
        yield dg.AssetCheckResult(
            asset_key=key, check_name="providers_fetched", passed=not failures,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"failed_providers": metadata["failed_providers"], "providers": len(self.providers)},
        )


def _check(key: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    return [dg.AssetCheckSpec("providers_fetched", asset=key,
                              description="every enabled provider answered (a failure keeps its last landed data)")]


PRICES_KEY = dg.AssetKey(["fetch", "prices"])
API_SPEND_KEY = dg.AssetKey(["fetch", "api_spend"])


FX_KEY = dg.AssetKey(["fetch", "fx"])


def _read_validators(ledger: LedgerResource) -> dict[str, dict[str, str]]:
    try:
        return json.loads((ledger.landing_dir.parent / VALIDATORS).read_text())
    except (OSError, ValueError):
        return {}  # none recorded yet (or unreadable): every request is unconditional


def _write_validators(ledger: LedgerResource, validators: dict[str, dict[str, str]]) -> None:
    path = ledger.landing_dir.parent / VALIDATORS
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(validators, sort_keys=True))
    tmp.replace(path)


def _fetch_and_land(context: dg.AssetExecutionContext, ledger: LedgerResource, key: dg.AssetKey,
                    config_name: str, family: str, what: str):
    """Fetch every enabled source of a `sources/prices/fetch.py` config and land each response as
    received into `family` (a source's failure is reported, never raised). A source whose last response
    was landed and carried an ETag or Last-Modified is asked conditionally; `304 Not Modified` lands
    nothing. The validators are kept in HOME/fetch_validators.json with the sha256 they came with, and
    used only while that file is in the manifest (a home whose landing was emptied asks afresh)."""
    report = FetchReport(config_file(ledger.inputs_dir, config_name))
    try:
        sources, settings = price_fetch.load_sources(report.config)
    except UnreadableFile as exc:
        yield from report.unreadable_config(key, exc)
        return
    enabled = [s for s in sources if s.get("enabled")]
    if not enabled:
        yield from report.outputs(key, f"no {what} source enabled in {report.config}; nothing fetched")
        return
    ledger.landing_dir.mkdir(parents=True, exist_ok=True)
    known = {(f.family, f.sha256): f for f in read_manifest(ledger.landing_dir)}
    validators = _read_validators(ledger)
    session = price_fetch.new_session()
    with tempfile.TemporaryDirectory(prefix="gpu-ledger-fetch-") as tmp:
        for spec in enabled:
            name = _SLUG.sub("_", str(spec.get("name", spec.get("url", "?"))))
            held = validators.get(f"{family}/{name}") or {}
            usable = held if held.get("url") == spec.get("url") and (family, held.get("sha256")) in known else None
            result = price_fetch.fetch_source(spec, settings, session, validators=usable)
            new = unchanged = 0
            for n, resp in enumerate(result.responses, 1):
                if resp.not_modified:
                    unchanged += 1
                    continue
                suffix = Path(resp.member).suffix.lower() if resp.member else _suffix(resp.content_type, resp.body)
                new += report.land(
                    Path(tmp), resp.body, f"{name}-p{n:03d}{suffix}", family,
                    ledger, known, origin=public_url(resp.url), fetched_at=resp.fetched_at.replace(tzinfo=UTC),
                    status=resp.status)
                if n == 1 and result.ok and resp.validators:
                    validators[f"{family}/{name}"] = {"url": spec.get("url"), "sha256": report.landed[-1].sha256,
                                                     **resp.validators}
            report.providers[result.source] = {
                "provider": result.provider, "status": "ok" if result.ok else "failed",
                "pages": len(result.responses), "files_new": new, "not_modified": unchanged, "error": result.error}
            if not result.ok:
                context.log.warning(f"{what} source {result.source} failed; its last landed data stays: {result.error}")
    _write_validators(ledger, validators)
    context.log.info(f"fetched {len(report.landed)} {what} files, {report.files_new} new")
    yield from report.outputs(key)


@dg.asset(key=PRICES_KEY, group_name="landing", kinds={"python"}, retry_policy=FETCH_RETRY,
          check_specs=_check(PRICES_KEY))
def fetch_prices(context: dg.AssetExecutionContext, ledger: LedgerResource):
    """Fetch every enabled price source of the provider config and land each page as received."""
    yield from _fetch_and_land(context, ledger, PRICES_KEY, PRICE_SOURCES, "prices", "price")


@dg.asset(key=FX_KEY, group_name="landing", kinds={"python"}, retry_policy=FETCH_RETRY,
          check_specs=_check(FX_KEY))
def fetch_fx(context: dg.AssetExecutionContext, ledger: LedgerResource):
    """Fetch every enabled exchange-rate source (the ECB reference-rate history) and land its CSV as the
    `fx` family, observed at the fetch time."""
    yield from _fetch_and_land(context, ledger, FX_KEY, FX_SOURCES, "fx", "exchange-rate")


def _api_window(lookback_days: int, now: datetime) -> tuple[int, int]:
    """The last `lookback_days` complete UTC days, as Unix seconds."""
    end = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return int((end - timedelta(days=lookback_days)).timestamp()), int(end.timestamp())


_API_ENDPOINTS = {
    "costs": (api_fetch.fetch_openai_costs, "/organization/costs", {"bucket_width": "1d", "limit": 180}),
    "usage_completions": (api_fetch.fetch_openai_usage_completions, "/organization/usage/completions",
                          {"bucket_width": "1d"}),
}


def _fetch_api_source(spec: dict[str, Any], defaults: dict[str, Any], report: FetchReport, tmp: Path,
                      ledger: LedgerResource, known: dict, env: dict[str, str]) -> None:
    name = spec.get("name", "?")
    entry: dict[str, Any] = {"provider": spec.get("provider"), "endpoint": spec.get("endpoint")}
    report.providers[name] = entry
    key_env = spec.get("key_env", "OPENAI_ADMIN_KEY")
    if not env.get(key_env):
        entry.update(status="skipped", reason=f"{key_env} is not set")
        return
    if spec.get("provider") != "openai" or spec.get("endpoint") not in _API_ENDPOINTS:
        entry.update(status="failed", error=f"unsupported provider/endpoint {spec.get('provider')}/{spec.get('endpoint')}")
        return
    fetch, path, fixed = _API_ENDPOINTS[spec["endpoint"]]
    opts = {**defaults, **spec}
    base = str(opts.get("base_url", api_fetch.OPENAI_BASE)).rstrip("/")
    start, end = _api_window(int(opts.get("lookback_days", 7)), datetime.now(UTC))
    try:
        result = fetch(start, end, key_env=key_env, base_url=base,
                       timeout=(10.0, float(opts.get("timeout_s", 60))), max_retries=int(opts.get("max_retries", 5)),
                       backoff=float(opts.get("backoff_s", 1.0)), max_wait=float(opts.get("max_wait_s", 120)))
    except api_fetch.FetchError as exc:  # its message never holds the key
        entry.update(status="failed", error=str(exc))
        return
    fetched_at = datetime.now(UTC)
    doc = api_fetch.write_pages(result, tmp / "pages.json", endpoint=path, provider="openai")
    origin = requests.Request("GET", f"{base}{path}", params={"start_time": start, "end_time": end, **fixed}).prepare().url
    body = doc.read_bytes()
    doc.unlink()
    new = report.land(tmp, body, f"{_SLUG.sub('_', name)}.json", "api_spend", ledger, known,
                      origin=public_url(origin), fetched_at=fetched_at, status=200)
    entry.update(status="ok", pages=len(result.pages), files_new=int(new), error=None)


@dg.asset(key=API_SPEND_KEY, group_name="landing", kinds={"python"}, retry_policy=FETCH_RETRY,
          check_specs=_check(API_SPEND_KEY))
def fetch_api_spend(context: dg.AssetExecutionContext, ledger: LedgerResource):
    """Fetch enabled LLM API cost/usage reports whose key variable is set; land them as one file each."""
    report = FetchReport(config_file(ledger.inputs_dir, API_SPEND_SOURCES))
    try:
        doc = load_yaml(report.config) or {}  # aliases refused (sources/registry/yaml_lines.py)
    except UnreadableFile as exc:
        yield from report.unreadable_config(API_SPEND_KEY, exc)
        return
    enabled = [s for s in doc.get("sources") or [] if s.get("enabled")]
    if not enabled:
        yield from report.outputs(API_SPEND_KEY, f"no API spend source enabled in {report.config}; nothing fetched")
        return
    ledger.landing_dir.mkdir(parents=True, exist_ok=True)
    known = {(f.family, f.sha256): f for f in read_manifest(ledger.landing_dir)}
    with tempfile.TemporaryDirectory(prefix="gpu-ledger-fetch-") as tmp:
        for spec in enabled:
            # Key variables are read at run time, here only to know whether they are set.
            _fetch_api_source(spec, doc.get("defaults") or {}, report, Path(tmp), ledger, known, dict(os.environ))
    for name, entry in report.providers.items():
        if entry["status"] == "failed":
            context.log.warning(f"API spend source {name} failed; its last landed report stays: {entry['error']}")
        elif entry["status"] == "skipped":
            context.log.info(f"API spend source {name} skipped: {entry['reason']}")
    yield from report.outputs(API_SPEND_KEY)


defs = dg.Definitions(assets=[fetch_prices, fetch_fx, fetch_api_spend])
