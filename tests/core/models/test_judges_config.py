"""The judges of the models config (core/models/model_config.py: parse_judges, load_judges)."""

import pytest
import yaml

from resumebias_dagster.core.models.model_config import ModelConfigError, load_judges, load_models, parse_judges


def provider(name, **extra):
    return {"name": name, "kind": "provider", "provider": "google", "model": "gemini-2.5-pro", **extra}


def test_judges_config():
    models = [
        provider("judge", enabled=False),
        provider("second", model="gpt-5", provider="openai"),
        {"name": "local", "kind": "local-llm", "source": "pypi:x"},
    ]
    judges = parse_judges({"models": models, "judges": ["judge", "second"]}, "m.yaml")
    assert [j.name for j in judges] == ["judge", "second"] and not judges[0].enabled
    assert parse_judges({"models": models}, "m.yaml") == []
    assert parse_judges({"models": models, "judges": []}, "m.yaml") == []
    bad = [
        (["nobody"], "m.yaml: judges: 'nobody' is not a model of this file.*Provider entries: judge, second"),
        (["local"], "'local' is a local-llm model; a judge must be a provider entry"),
        (["judge", "second", "judge"], "at most 2 judges"),
        (["judge", "judge"], "names a model twice"),
        ("judge", "expected a list of model names"),
    ]
    for judges_value, message in bad:
        with pytest.raises(ModelConfigError, match=message):
            parse_judges({"models": models, "judges": judges_value}, "m.yaml")
    # A judge's limit is held to the one rule of every entry and task (tests/core/providers/test_token_limits.py).
    with pytest.raises(ModelConfigError, match="m.yaml: model 'tiny': max_tokens.judge is 16, too few"):
        parse_judges({"models": [provider("tiny", max_tokens={"judge": 16})], "judges": ["tiny"]}, "m.yaml")


def test_load_judges_names_the_file_and_leaves_load_models_alone(tmp_path):
    assert load_judges() == []  # packaged: no judge offline
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [provider("judge", enabled=False)], "judges": ["judge"]}))
    assert [j.name for j in load_judges(path)] == ["judge"]
    assert load_models(path) == [] and len(load_models(path, include_disabled=True)) == 1
    path.write_text(yaml.safe_dump({"models": [provider("judge")], "judges": ["gemini"]}))
    with pytest.raises(ModelConfigError, match=f"{path}: judges: 'gemini' is not a model"):
        load_judges(path)
