"""Real HTTP servers on 127.0.0.1 that speak the providers' wire formats, for tests and benchmarks.

One server speaks one wire format:

- ``openai``: ``POST {base}/v1/chat/completions`` (OpenAI, OpenRouter, Groq, Mistral, vLLM ...)
- ``anthropic``: ``POST {base}/v1/messages``
- ``gemini``: ``POST {base}/{version}/...models/{model}:generateContent`` (Gemini API and Vertex)

Each request is answered from a script (``server.script(reply, ...)``, first in first out),
else by the fault profile (a seeded share of transient faults), else with an answer from
``answer(request)``. Every request is counted at the server the moment it is read, so tests
can assert exact call counts. The real SDK clients are pointed at ``server.base_url``.

Run one in its own process for benchmarks (a process of its own keeps the client's event
loop the only thing on its core)::

    python -m resumebias_dagster.testing.fake_providers --wire openai --latency-s 0.2 --port-file p
"""

from resumebias_dagster.testing.fake_providers.cli import main
from resumebias_dagster.testing.fake_providers.replies import (
    HOSTILE_KINDS,
    WIRES,
    FakeRequest,
    FaultProfile,
    Reply,
    Stats,
    answer,
    auth_error,
    content_filter,
    empty,
    error_in_200,
    hostile,
    malformed,
    rate_limited,
    raw_body,
    refusal,
    reset,
    server_error,
    slow,
    status,
)
from resumebias_dagster.testing.fake_providers.resumes import structured_resume, structured_resume_answers
from resumebias_dagster.testing.fake_providers.server import FakeProviderServer

__all__ = [
    "HOSTILE_KINDS",
    "WIRES",
    "FakeProviderServer",
    "FakeRequest",
    "FaultProfile",
    "Reply",
    "Stats",
    "answer",
    "auth_error",
    "content_filter",
    "empty",
    "error_in_200",
    "hostile",
    "main",
    "malformed",
    "rate_limited",
    "raw_body",
    "refusal",
    "reset",
    "server_error",
    "slow",
    "status",
    "structured_resume",
    "structured_resume_answers",
]
