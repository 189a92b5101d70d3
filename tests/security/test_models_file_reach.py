"""A models file is code-equivalent input (issue 40, item 4): ``api_key_env`` could name any
variable of the environment (``PGPASSWORD``, ``AWS_SECRET_ACCESS_KEY``) and ``headers`` could
set ``Host``. Both are refused unless the entry opts in, naming the model and the setting, and
``resumebias run --config`` prints what the file's models reach before any call."""

import pytest

from resumebias_dagster.core.models.model_config import ModelConfigError, parse_models
from resumebias_dagster.core.models.trust import reach

HTTP = {"name": "acme", "kind": "http", "url": "https://scorer.example/score", "body": "{}", "answer": {"score": "$.s"}}
PROVIDER = {"name": "gw", "kind": "provider", "provider": "openai", "model": "m", "base_url": "https://gw.example/v1"}


def parse(entry):
    return parse_models({"models": [entry]}, "models.yaml")


@pytest.mark.parametrize("base", [HTTP, PROVIDER], ids=["http", "provider"])
@pytest.mark.parametrize(
    ("key_env", "message"),
    [
        ("PGPASSWORD", "api_key_env 'PGPASSWORD' is one of this deployment's own credentials"),
        ("AWS_SECRET_ACCESS_KEY", "api_key_env 'AWS_SECRET_ACCESS_KEY' is one of this deployment's own credentials"),
        ("RESUMEBIAS_STORE_URL", "api_key_env 'RESUMEBIAS_STORE_URL' is one of this deployment's own credentials"),
        ("HOME", "api_key_env 'HOME' is not named like an API key"),
        ("SSH_AUTH_SOCK", "api_key_env 'SSH_AUTH_SOCK' is not named like an API key"),
    ],
)
def test_a_key_variable_that_is_no_screeners_key_is_refused(base, key_env, message):
    with pytest.raises(ModelConfigError) as exc:
        parse({**base, "api_key_env": key_env})
    assert str(exc.value).startswith(f"models.yaml: model {base['name']!r}: {message}")
    assert "allow_any_key_env: true" in str(exc.value)
    parse({**base, "api_key_env": key_env, "allow_any_key_env": True})  # the user's explicit choice


@pytest.mark.parametrize("key_env", ["ACME_SCORER_KEY", "OPENAI_API_KEY", "HF_TOKEN", "VENDOR_SECRET", "acme_apikey"])
def test_a_variable_named_like_a_key_is_accepted(key_env):
    assert parse({**HTTP, "api_key_env": key_env})[0].options["api_key_env"] == key_env


def test_a_host_header_is_refused_unless_opted_in():
    with pytest.raises(ModelConfigError, match=r"model 'acme': headers.Host sends the request to a virtual host"):
        parse({**HTTP, "headers": {"host": "internal.example"}})
    parse({**HTTP, "headers": {"Host": "internal.example"}, "allow_host_header": True})
    with pytest.raises(ModelConfigError, match="allow_host_header must be true or false, got 'yes'"):
        parse({**HTTP, "allow_host_header": "yes"})


def test_what_the_models_reach_is_listed():
    specs = parse_models(
        {
            "models": [
                {**HTTP, "api_key_env": "ACME_SCORER_KEY"},
                {**PROVIDER, "api_key_env": "GW_API_KEY"},
                {"name": "fn", "kind": "python", "entry_point": "acme_scorer:score"},
            ]
        },
        "models.yaml",
    )
    assert reach(specs) == [
        "  acme (http): calls scorer.example, with the key in $ACME_SCORER_KEY",
        "  gw (provider): calls openai at gw.example, with the key in $GW_API_KEY",
        "  fn (python): imports acme_scorer:score",
    ]
