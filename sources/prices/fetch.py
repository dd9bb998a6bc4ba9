"""Fetch price pages/APIs and rate files for landing: timeouts, retries, paging, a size cap.

`fetch_source` never raises past one provider: a provider that fails returns a `FetchResult`
with `error` set, so one broken source never stops the others. Bytes are returned untouched
(a source configured with `unzip: <member>` returns that member of the zip it downloads); the
pipeline lands them (content-addressed) and parses them later with the named format. Given the
validators of the source's last landed response (ETag, Last-Modified), the request is conditional:
a `304 Not Modified` comes back as a response marked `not_modified`, with no body to land.
"""

from __future__ import annotations

import io
import json
import re
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import requests

from sources.registry.yaml_lines import load_yaml

USER_AGENT = "gpu-ledger-price-fetcher/0.1 (+GPU cost ledger; list-price collection)"
CONFIG = Path(__file__).resolve().parents[2] / "config" / "fetch" / "price_sources.yaml"
RETRY_STATUSES = {429, 500, 502, 503, 504}
_QUERY = re.compile(r"\?[^\s'\")]*")


@dataclass(frozen=True)
class FetchSettings:
    """Network limits; tests shrink backoff and caps to keep runs fast."""

    timeout_s: float = 30.0
    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0  # also caps a server's Retry-After
    max_bytes: int = 50 * 1024 * 1024
    max_pages: int = 1000


@dataclass
class FetchedResponse:
    """One HTTP response body as received."""

    url: str
    status: int
    fetched_at: datetime  # naive UTC
    body: bytes
    content_type: str | None
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False  # a 304 to a conditional request: nothing new, no body
    member: str | None = None  # the zip member `body` was read from (`unzip`)

    @property
    def validators(self) -> dict[str, str]:
        """What makes the next request for this URL conditional (empty when the server sent none)."""
        return {k: v for k, v in (("etag", self.etag), ("last_modified", self.last_modified)) if v}


@dataclass
class FetchResult:
    """Everything fetched for one source, or the error that stopped it."""

    source: str
    provider: str
    format: str
    responses: list[FetchedResponse] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class FetchError(Exception):
    """A request failed for good (after retries), or its body broke a limit."""


def new_session() -> requests.Session:
    """Session with the project's User-Agent (retries are ours, not urllib3's, to honour caps)."""
    session = requests.Session()
    session.headers["User-Agent"] = USER_AGENT
    return session


def _retry_after(resp: requests.Response) -> float | None:
    value = resp.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
            return max(0.0, (when - datetime.now(UTC)).total_seconds())
        except (TypeError, ValueError):
            return None


def _read_capped(resp: requests.Response, max_bytes: int, url: str) -> bytes:
    declared = resp.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(f"{url}: response of {declared} bytes exceeds the {max_bytes}-byte limit")
    chunks, size = [], 0
    for chunk in resp.iter_content(chunk_size=65536):
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(f"{url}: response exceeds the {max_bytes}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def get_with_retries(
    session: requests.Session,
    url: str,
    settings: FetchSettings,
    params: dict[str, Any] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    validators: dict[str, str] | None = None,
) -> FetchedResponse:
    """GET with retries on 429/5xx and connection errors/timeouts, exponential backoff, Retry-After honoured (capped).
    `validators` (`etag`, `last_modified` of the last landed response) make it conditional."""
    headers = {}
    if validators and validators.get("etag"):
        headers["If-None-Match"] = validators["etag"]
    if validators and validators.get("last_modified"):
        headers["If-Modified-Since"] = validators["last_modified"]
    last = "no attempt made"
    for attempt in range(settings.max_retries + 1):
        try:
            with session.get(url, params=params, headers=headers, timeout=settings.timeout_s, stream=True) as resp:
                if resp.status_code == 304 and headers:
                    return FetchedResponse(url=resp.url, status=304, fetched_at=datetime.now(UTC).replace(tzinfo=None),
                                           body=b"", content_type=None, not_modified=True, **_validators(resp))
                if resp.status_code in RETRY_STATUSES:
                    last = f"HTTP {resp.status_code}"
                    wait = _retry_after(resp)
                else:
                    body = _read_capped(resp, settings.max_bytes, url)
                    if resp.status_code >= 400:
                        raise FetchError(f"{url}: HTTP {resp.status_code}")
                    return FetchedResponse(
                        url=resp.url,
                        status=resp.status_code,
                        fetched_at=datetime.now(UTC).replace(tzinfo=None),
                        body=body,
                        content_type=resp.headers.get("Content-Type"),
                        **_validators(resp),
                    )
        except (requests.Timeout, requests.ConnectionError) as exc:
            # requests puts the full URL, query included, in the message: a credential-like
            # query value (`?api_key=...`) must not reach FetchResult.error or any log.
            last, wait = f"{type(exc).__name__}: {_QUERY.sub('?***', str(exc))}", None
        if attempt == settings.max_retries:
            break
        delay = wait if wait is not None else settings.backoff_s * (2**attempt)
        sleep(min(delay, settings.max_backoff_s))
    raise FetchError(f"{url}: gave up after {settings.max_retries + 1} attempts ({last})")


def _validators(resp: requests.Response) -> dict[str, str | None]:
    return {"etag": resp.headers.get("ETag"), "last_modified": resp.headers.get("Last-Modified")}


def unzip_member(page: FetchedResponse, member: str, max_bytes: int) -> FetchedResponse:
    """The response with its body replaced by `member` of the zip it holds; a body that is not a
    readable zip, lacks the member, or inflates beyond `max_bytes` is a FetchError naming the URL."""
    try:
        with zipfile.ZipFile(io.BytesIO(page.body)) as archive:
            info = archive.getinfo(member)
            if info.file_size > max_bytes:
                raise FetchError(f"{page.url}: {member} inflates to {info.file_size} bytes, over the {max_bytes}-byte limit")
            body = archive.read(info)
    except KeyError:
        raise FetchError(f"{page.url}: the zip has no member {member!r}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise FetchError(f"{page.url}: corrupt zip ({type(exc).__name__}: {exc})") from None
    return FetchedResponse(url=page.url, status=page.status, fetched_at=page.fetched_at, body=body,
                           content_type=None, etag=page.etag, last_modified=page.last_modified, member=member)


def _next_page(body: bytes) -> str | None:
    try:
        return json.loads(body).get("NextPageLink") or None
    except (ValueError, AttributeError):
        return None


def fetch_source(
    spec: dict[str, Any],
    settings: FetchSettings | None = None,
    session: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
    validators: dict[str, str] | None = None,
) -> FetchResult:
    """Fetch one configured source (following Azure NextPageLink paging; `unzip: <member>` reads one
    member of a zip); errors become `result.error`. `validators` make the first request conditional."""
    settings = settings or FetchSettings()
    if spec.get("max_bytes"):
        settings = FetchSettings(**{**settings.__dict__, "max_bytes": int(spec["max_bytes"])})
    result = FetchResult(
        source=spec.get("name", spec.get("url", "?")),
        provider=spec.get("provider", "?"),
        format=spec.get("format", "?"),
    )
    session = session or new_session()
    url: str | None = spec["url"]
    params = spec.get("params")
    try:
        while url:
            if len(result.responses) >= settings.max_pages:
                raise FetchError(f"{url}: more than {settings.max_pages} pages")
            page = get_with_retries(session, url, settings, params=params, sleep=sleep, validators=validators)
            validators = None  # only the first URL is the one the validators were recorded for
            if spec.get("unzip") and not page.not_modified:
                page = unzip_member(page, str(spec["unzip"]), settings.max_bytes)  # before it can be landed
            result.responses.append(page)
            url = _next_page(page.body) if spec.get("paging") == "azure_next_page_link" else None
            params = None  # NextPageLink already carries the query
    except (FetchError, requests.RequestException) as exc:
        result.error = str(exc)
    return result


def load_sources(config: Path = CONFIG) -> tuple[list[dict[str, Any]], FetchSettings]:
    """Configured sources and default settings from config/fetch/price_sources.yaml."""
    doc = load_yaml(config) or {}  # aliases refused (sources/registry/yaml_lines.py)
    defaults = doc.get("defaults") or {}
    known = FetchSettings.__dataclass_fields__
    settings = FetchSettings(**{k: v for k, v in defaults.items() if k in known})
    return list(doc.get("sources") or []), settings


def fetch_enabled(config: Path = CONFIG, settings: FetchSettings | None = None) -> list[FetchResult]:
    """Fetch every enabled source; disabled ones are skipped (all are, by default)."""
    sources, defaults = load_sources(config)
    session = new_session()
    return [fetch_source(s, settings or defaults, session) for s in sources if s.get("enabled")]
