"""Fetch paged cost/usage reports from provider admin APIs into files the parsers read.

Both OpenAI (`/v1/organization/costs`, `/v1/organization/usage/*`) and Anthropic's
organization reports page the same way: `{"data": [...], "has_more", "next_page"}`, the
cursor going back as the `page` query parameter. `fetch_pages` follows it until
`has_more` is false, retrying 429/5xx (honouring Retry-After), and stops with
`RepeatedPageError` when the API hands out a cursor it already gave (a loop).

The API key is read from the environment variable *named* by the caller; it is sent only in
a header, never logged, and scrubbed from every error message. `write_pages` stores the raw
page texts verbatim (no float round-trip) in one document the family's parsers detect.
This module does network I/O; parsers never import it.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

log = logging.getLogger(__name__)

OPENAI_BASE = "https://api.openai.com/v1"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class FetchError(Exception):
    """A report could not be fetched; the message never contains the API key."""


class RepeatedPageError(FetchError):
    """The API returned a `next_page` cursor it had already returned: paging would loop."""


@dataclass
class FetchResult:
    """Raw page texts (verbatim, for exact amounts) and their parsed form."""

    raw_pages: list[str] = field(default_factory=list)
    pages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def buckets(self) -> list[Any]:
        """Every time bucket across the pages, in order."""
        return [b for p in self.pages for b in p.get("data") or []]


def _redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def _retry_after(resp: requests.Response, default: float, cap: float) -> float:
    """Seconds to wait: Retry-After as seconds or an HTTP date, else `default`; capped."""
    value = resp.headers.get("Retry-After")
    if value:
        try:
            return min(max(float(value), 0.0), cap)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
                return min(max(when.timestamp() - time.time(), 0.0), cap)
            except (TypeError, ValueError):
                pass
    return min(default, cap)


def _headers(auth: str, key: str, extra: dict[str, str] | None) -> dict[str, str]:
    if auth == "bearer":
        headers = {"Authorization": f"Bearer {key}"}
    elif auth == "x-api-key":
        headers = {"x-api-key": key}
    else:
        raise ValueError(f"unknown auth style {auth!r}")
    headers["Accept"] = "application/json"
    return {**headers, **(extra or {})}


def _get(
    session: requests.Session,
    url: str,
    params: dict[str, Any],
    headers: dict[str, str],
    key: str,
    *,
    timeout: tuple[float, float],
    max_retries: int,
    backoff: float,
    max_wait: float,
    sleep: Callable[[float], None],
) -> requests.Response:
    """One GET with retries on 429/5xx and connection errors."""
    for attempt in range(max_retries + 1):
        try:
            resp = session.get(url, params=params, headers=headers, timeout=timeout)
        except requests.RequestException as exc:
            if attempt == max_retries:
                raise FetchError(_redact(f"GET {url} failed after {attempt + 1} attempts: {exc}", key)) from None
            wait = min(backoff * 2**attempt, max_wait)
            log.warning("GET %s: %s; retrying in %.1fs", url, type(exc).__name__, wait)
            sleep(wait)
            continue
        if resp.status_code in RETRY_STATUSES and attempt < max_retries:
            wait = _retry_after(resp, backoff * 2**attempt, max_wait)
            log.warning("GET %s: HTTP %s; retrying in %.1fs", url, resp.status_code, wait)
            sleep(wait)
            continue
        if resp.status_code != 200:
            body = _redact(resp.text, key)[:300]  # redact first: a cut could split the key and leak its prefix
            raise FetchError(f"GET {url} returned HTTP {resp.status_code}: {body}")
        return resp
    raise FetchError(f"GET {url}: retries exhausted")  # unreachable; keeps type checkers calm


def fetch_pages(
    url: str,
    params: dict[str, Any],
    *,
    key_env: str,
    auth: str = "bearer",
    extra_headers: dict[str, str] | None = None,
    session: requests.Session | None = None,
    timeout: tuple[float, float] = (10.0, 60.0),
    max_retries: int = 5,
    backoff: float = 1.0,
    max_wait: float = 120.0,
    max_pages: int = 10_000,
    sleep: Callable[[float], None] = time.sleep,
) -> FetchResult:
    """GET `url` and every following page (`page=<next_page>`) until `has_more` is false.

    `key_env` is the *name* of the environment variable holding the admin key.
    Raises FetchError (no key in the message) or RepeatedPageError on a cursor loop.
    """
    key = os.environ.get(key_env)
    if not key:
        raise FetchError(f"environment variable {key_env} is not set (it must hold the admin API key)")
    headers = _headers(auth, key, extra_headers)
    session = session or requests.Session()
    result = FetchResult()
    seen: set[str] = set()
    query = dict(params)
    while True:
        if len(result.pages) >= max_pages:
            raise FetchError(f"GET {url}: more than {max_pages} pages, stopping")
        resp = _get(
            session, url, query, headers, key,
            timeout=timeout, max_retries=max_retries, backoff=backoff, max_wait=max_wait, sleep=sleep,
        )
        try:
            page = resp.json()
        except ValueError:
            raise FetchError(f"GET {url}: page {len(result.pages) + 1} is not JSON") from None
        if not isinstance(page, dict) or not isinstance(page.get("data"), list):
            raise FetchError(f"GET {url}: page {len(result.pages) + 1} has no 'data' list")
        result.raw_pages.append(resp.text)
        result.pages.append(page)
        if not page.get("has_more"):
            return result
        cursor = page.get("next_page")
        if not cursor:
            raise FetchError(f"GET {url}: page {len(result.pages)} says has_more but gives no next_page")
        if cursor in seen:
            raise RepeatedPageError(
                f"GET {url}: next_page {cursor!r} was already returned (page {len(result.pages)}); "
                "the API is repeating pages, stopping instead of looping"
            )
        seen.add(cursor)
        query = {**params, "page": cursor}


def fetch_openai_costs(
    start_time: int, end_time: int | None = None, *, key_env: str = "OPENAI_ADMIN_KEY",
    base_url: str = OPENAI_BASE, group_by: list[str] | None = None, **kwargs: Any,
) -> FetchResult:
    """Daily cost buckets from OpenAI /organization/costs (Unix-second bounds)."""
    params: dict[str, Any] = {"start_time": start_time, "bucket_width": "1d", "limit": 180}
    if end_time is not None:
        params["end_time"] = end_time
    if group_by:
        params["group_by"] = group_by
    return fetch_pages(f"{base_url}/organization/costs", params, key_env=key_env, **kwargs)


def fetch_openai_usage_completions(
    start_time: int, end_time: int | None = None, *, key_env: str = "OPENAI_ADMIN_KEY",
    base_url: str = OPENAI_BASE, group_by: list[str] | None = None, bucket_width: str = "1d", **kwargs: Any,
) -> FetchResult:
    """Completions usage buckets from OpenAI /organization/usage/completions."""
    params: dict[str, Any] = {"start_time": start_time, "bucket_width": bucket_width}
    if end_time is not None:
        params["end_time"] = end_time
    if group_by:
        params["group_by"] = group_by
    return fetch_pages(f"{base_url}/organization/usage/completions", params, key_env=key_env, **kwargs)


def fetch_anthropic_report(
    url: str, starting_at: str, ending_at: str, *, key_env: str = "ANTHROPIC_ADMIN_KEY",
    group_by: list[str] | None = None, bucket_width: str = "1d", **kwargs: Any,
) -> FetchResult:
    """An Anthropic organization cost_report / usage_report.

    The endpoint URL is passed in: the schema we have (SDK 2.14 models) names the fields but
    not the HTTP path, and guessing it would hide a wrong URL behind a 404.
    """
    params: dict[str, Any] = {"starting_at": starting_at, "ending_at": ending_at, "bucket_width": bucket_width}
    if group_by:
        params["group_by[]"] = group_by
    headers = {"anthropic-version": "2023-06-01", **kwargs.pop("extra_headers", {})}
    return fetch_pages(url, params, key_env=key_env, auth="x-api-key", extra_headers=headers, **kwargs)


def write_pages(result: FetchResult, path: Path, *, endpoint: str, provider: str) -> Path:
    """Store fetched pages in one file for inputs/api_spend/ (raw page texts, verbatim).

    OpenAI: `{"object": "page", "endpoint": ..., "data": [], "pages": [<raw page>...]}`;
    Anthropic: `{"data": [], "endpoint": ..., "pages": [...]}` (the shape its detector expects).
    """
    head = {"object": "page", "endpoint": endpoint} if provider == "openai" else {"data": [], "endpoint": endpoint}
    opening = json.dumps(head)[:-1]
    body = ",\n".join(raw.strip() for raw in result.raw_pages)
    tail = ', "data": [], ' if provider == "openai" else ", "
    text = f'{opening}{tail}"has_more": false, "next_page": null, "pages": [\n{body}\n]}}\n'
    json.loads(text)  # the assembled document must be valid JSON
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)
