"""Endpoints as text: the one place a provider ``base_url`` is parsed, checked, hashed or printed.

A base_url may carry credentials (``https://user:pass@gateway/v1``, ``...?key=...``); only these
functions turn one into text for keys, tags, pools or messages, and they drop them.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit


class ProviderConfigError(ValueError):
    """A provider model is configured wrongly or lacks its key; raised before any call."""


OPENAI_HOSTS = ("api.openai.com",)
_DEFAULT_HOSTS = {
    "openai": OPENAI_HOSTS,
    "anthropic": ("api.anthropic.com",),
    "google": ("generativelanguage.googleapis.com", "aiplatform.googleapis.com"),
}
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")


# ------------------------------------------------------------------ endpoints as text
# A base_url may carry credentials (``https://user:pass@gateway/v1``, ``...?key=...``). Only
# these functions turn one into text for keys, tags, pools or messages, and they drop them.


def url_without_secrets(url: str) -> str:
    """``scheme://host[:port]/path`` of ``url``: no user info, query or fragment, host in
    lower case, no trailing slash. The whole endpoint, safe to store, tag or print."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port is not None else "")
    path = parts.path.rstrip("/")
    scheme = parts.scheme.lower()
    return f"{scheme}://{netloc}{path}" if scheme else f"{netloc}{path}"


def query_fingerprint(url: str) -> str:
    """``?query-sha256=<16 hex>`` of the whole query of ``url`` ('' when it has none): part of
    the endpoint, so ``?upstream=a`` and ``?upstream=b`` never share answers, nor do
    ``?upstream_token=a`` and ``=b`` (a name that looks like a credential may choose the
    upstream: issue 40). A hash, not the text: a value may be a credential, and the endpoint is
    stored with every answer. So a key rotated in the URL asks again: keys go in api_key_env."""
    pairs = sorted(parse_qsl(urlsplit(url.strip()).query, keep_blank_values=True))
    if not pairs:
        return ""
    canonical = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
    return f"?query-sha256={hashlib.sha256(canonical.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def split_query(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without query and fragment, and the query's parameters. The openai and anthropic
    SDKs append their paths to the base URL's text (``/v1?upstream=a`` reached the server as
    ``/v1/?upstream=achat/completions``); given as ``default_query`` the query goes with every
    request, after the path."""
    parts = urlsplit(url)
    if not parts.query and not parts.fragment:
        return url, {}
    return urlunsplit(parts._replace(query="", fragment="")), dict(parse_qsl(parts.query, keep_blank_values=True))


def is_loopback_host(host: str) -> bool:
    """localhost, 127.0.0.0/8, ::1 (or 0.0.0.0, which reaches this machine): never on a network."""
    host = host.lower().rstrip(".")
    if host in ("localhost", "0.0.0.0"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def check_base_url(name: str, base_url: str | None, setting: str = "base_url") -> None:
    """Refuse a ``base_url`` that is not https, unless it is plain HTTP to this machine.

    Plain HTTP sends the key (and the résumés) readable to every host on the way. Loopback
    (localhost, 127.0.0.1, ::1) never leaves the machine, so a local server (vLLM, Ollama, a
    fake provider in tests) may use it. Private-network addresses (10/8, 192.168/16, a LAN
    name) are refused too: anyone on that network, a shared Wi-Fi, a cloud VPC, other
    containers, could read the traffic, and a name may resolve anywhere. Such a server is
    reached through https or a tunnel to a loopback port.
    """
    if base_url is None:
        return
    where = f"model {name!r}: {setting}"
    if not isinstance(base_url, str) or "://" not in base_url:
        raise ProviderConfigError(f"{where} must be an http(s) URL such as https://host/v1")
    parts = urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ProviderConfigError(f"{where} must be an http(s) URL such as https://host/v1")
    if scheme == "http" and not is_loopback_host(parts.hostname or ""):
        raise ProviderConfigError(
            f"{where} {url_without_secrets(base_url)} is plain HTTP to another machine: the key and the résumés "
            "would cross the network unencrypted. Use https://, or reach the server through this machine's "
            "loopback (http://127.0.0.1, http://localhost or http://[::1], e.g. an SSH tunnel: "
            "ssh -L 8000:server:8000). Private-network addresses are refused too: anyone on that network can "
            "read plain HTTP."
        )


def url_host(url: str) -> str:
    """``host[:port]`` of ``url``, without credentials."""
    return url_without_secrets(url).split("://", 1)[-1].split("/", 1)[0]


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The credentials embedded in ``url`` (user, password, query values), to redact."""
    if not url:
        return ()
    parts = urlsplit(url.strip())
    found = [parts.username, parts.password]
    found += [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    if parts.fragment:
        found.append(parts.fragment)
    return tuple(dict.fromkeys(s for s in found if s and len(s) >= 3))


def is_custom_endpoint(base_url: str | None, provider: str = "openai") -> bool:
    """A base_url whose host is not the provider's own (OpenRouter, Groq, vLLM, a gateway ...)."""
    if not base_url:
        return False
    return not is_provider_host(base_url, provider)


def is_provider_host(url: str, provider: str) -> bool:
    """Whether ``url``'s host is one of the provider's own (a Vertex region included)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _DEFAULT_HOSTS[provider]:
        return True
    return provider == "google" and re.fullmatch(r"[a-z0-9-]+-aiplatform\.googleapis\.com", host) is not None


def is_local_endpoint(base_url: str | None) -> bool:
    return bool(base_url) and (urlsplit(base_url).hostname or "") in _LOCAL_HOSTS
