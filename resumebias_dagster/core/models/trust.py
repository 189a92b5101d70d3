"""What a models file may reach, and what it will (issue 40): a models file (and an audit file
naming one) is code-equivalent input. ``kind: python`` imports its entry point; ``kind: http``
and ``provider`` send a key from an environment variable to a host of the file's choosing.

Two rules guard the common mistakes and tricks, each with an opt-in for the rare real need:

- ``api_key_env`` must be named like an API key (``*_KEY``, ``*_TOKEN``, ``*_SECRET``) and not
  be one of the deployment's own credentials (``PGPASSWORD``, ``AWS_*``, the store and tables
  URLs, ``DAGSTER_*``, Google's credential file); ``allow_any_key_env: true`` lifts it.
- ``headers`` may not set ``Host`` (a virtual host other than the URL's, which the URL check
  cannot see); ``allow_host_header: true`` lifts it.

``reach`` lists, per model, the hosts, environment variables and entry points a run will use:
``resumebias run --config`` prints it before any call.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from resumebias_dagster.settings import STORE_URL_ENV, STORE_URLS_ENV, TABLES_URL_ENV

KEY_LIKE = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PAT)$", re.IGNORECASE)
# The deployment's own credentials: what a stranger's models file would most like to send away.
_OWN = "|".join(re.escape(name) for name in (STORE_URL_ENV, STORE_URLS_ENV, TABLES_URL_ENV))
DEPLOYMENT_SECRETS = re.compile(
    rf"^(PGPASSWORD|PGPASSFILE|PGSERVICEFILE|AWS_.*|{_OWN}|DAGSTER_.*|GOOGLE_APPLICATION_CREDENTIALS)$",
    re.IGNORECASE,
)
OPT_INS = ("allow_any_key_env", "allow_host_header")


class ModelTrustError(ValueError):
    """A models file reaches further than a screener needs; the message names the setting."""


def check_reach(entry: dict[str, Any], where: str) -> None:
    """Refuse a key variable not named like a key, a deployment credential, or a ``Host`` header,
    unless the entry opts in; ``ModelTrustError`` naming the model and the setting."""
    for opt_in in OPT_INS:
        if opt_in in entry and not isinstance(entry[opt_in], bool):
            raise ModelTrustError(f"{where}: {opt_in} must be true or false, got {entry[opt_in]!r}")
    key_env = entry.get("api_key_env")
    if isinstance(key_env, str) and key_env and not entry.get("allow_any_key_env"):
        if DEPLOYMENT_SECRETS.match(key_env):
            raise ModelTrustError(
                f"{where}: api_key_env {key_env!r} is one of this deployment's own credentials, not a screener's key; "
                "name the variable that holds the screener's key (or set allow_any_key_env: true if you mean it)"
            )
        if not KEY_LIKE.search(key_env):
            raise ModelTrustError(
                f"{where}: api_key_env {key_env!r} is not named like an API key (..._KEY, ..._TOKEN, ..._SECRET): "
                "a models file could otherwise send any variable of your environment to its host; rename the "
                "variable, or set allow_any_key_env: true"
            )
    headers = entry.get("headers")
    if isinstance(headers, dict) and not entry.get("allow_host_header"):
        if any(str(name).strip().lower() == "host" for name in headers):
            raise ModelTrustError(
                f"{where}: headers.Host sends the request to a virtual host other than the url's; remove it, "
                "or set allow_host_header: true"
            )


def reach(specs) -> list[str]:
    """One line per model of what a run of it will use: the host it calls and the variable its
    key comes from, or the entry point it imports (kinds that stay on this machine say so)."""
    lines = []
    for spec in specs:
        o = spec.options
        if spec.kind == "http":
            what = f"calls {urlsplit(str(o.get('url', ''))).netloc}"
        elif spec.kind == "provider":
            what = f"calls {o.get('provider')} at {urlsplit(str(o.get('base_url') or '')).netloc or 'its API'}"
        elif spec.kind == "python":
            what = f"imports {o.get('entry_point')}"
        else:
            what = "runs on this machine"
        key = o.get("api_key_env")
        if key:
            what += f", with the key in ${key}"
        lines.append(f"  {spec.name} ({spec.kind}): {what}")
    return lines
