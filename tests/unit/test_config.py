import json
import logging
from pathlib import Path

import pytest

from bot.config import ConfigError, RuntimeConfig, RuntimeConfigStore, parse_runtime_config

REPO = Path(__file__).resolve().parents[2]


def test_missing_file_means_defaults(tmp_path):
    store = RuntimeConfigStore(tmp_path / "nope.json")
    assert store.current() == RuntimeConfig()
    assert store.current().rag.query_mode == "hybrid"


def test_rag_section_has_the_seed_fields_and_defaults():
    rag = RuntimeConfig().rag
    assert (rag.enabled, rag.url, rag.api_key.get_secret_value()) == (
        False,
        "http://localhost:9621",
        "",
    )
    assert (rag.query_mode, rag.timeout_seconds, rag.index_min_length) == ("hybrid", 10, 50)


def test_shipped_file_is_valid_and_equals_defaults():
    shipped = parse_runtime_config((REPO / "preferences" / "runtime-config.json").read_text())
    assert shipped == RuntimeConfig()


def test_partial_file_keeps_defaults_for_the_rest(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"llm": {"model": "llama3"}, "rag": {"queryMode": "local"}}')
    config = RuntimeConfigStore(path).current()
    assert config.llm.model == "llama3"
    assert config.llm.temperature == 0.7
    assert config.rag.query_mode == "local"
    assert config.rag.timeout_seconds == 10


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"llm": {"model": "x",}}', "not valid JSON at line 1"),
        ('{"llm": {"temperature": "hot"}}', "llm.temperature"),
        ('{"llm": {"temperature": 5}}', "llm.temperature: Input should be less than or equal to 2"),
        ('{"rag": {"queryMode": "deep"}}', "rag.queryMode"),
        ('{"rateLimit": {"messagesPerMinute": 0}}', "rateLimit.messagesPerMinute"),
        ("[1, 2]", "top level must be a JSON object"),
        ('{"llm": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ],
)
def test_invalid_edit_keeps_last_good_and_names_the_field(tmp_path, caplog, text, named):
    path = tmp_path / "c.json"
    path.write_text('{"llm": {"model": "good-model"}}')
    store = RuntimeConfigStore(path)
    assert store.current().llm.model == "good-model"

    path.write_text(text)
    with caplog.at_level(logging.ERROR):
        config = store.current()
    assert config.llm.model == "good-model"
    assert named in store.last_error
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert str(path) in errors[0] and named in errors[0]
    assert path.read_text() == text, "the bot must never overwrite the operator's file"


def test_broken_edit_is_reported_once_not_every_turn(tmp_path, caplog):
    path = tmp_path / "c.json"
    path.write_text("{}")
    store = RuntimeConfigStore(path)
    path.write_text("{oops")
    with caplog.at_level(logging.ERROR):
        for _ in range(5):
            store.current()
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 1


def test_invalid_file_at_start_means_defaults_and_an_error(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"llm": {"maxOutputTokens": -1}}')
    store = RuntimeConfigStore(path)
    assert store.current() == RuntimeConfig()
    assert "llm.maxOutputTokens" in store.last_error


def test_hot_reload_applies_each_edit(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"llm": {"model": "one"}}')
    store = RuntimeConfigStore(path)
    assert store.current().llm.model == "one"
    path.write_text('{"llm": {"model": "two"}}')  # same size, same clock tick
    assert store.current().llm.model == "two"
    path.write_text('{"llm": {"model": "three"}, "rag": {"enabled": true}}')
    assert store.current().rag.enabled is True
    assert store.last_error is None


def test_fixing_a_broken_file_clears_the_error(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("{}")
    store = RuntimeConfigStore(path)
    path.write_text("{broken")
    store.current()
    assert store.last_error
    path.write_text('{"llm": {"model": "fixed"}}')
    assert store.current().llm.model == "fixed"
    assert store.last_error is None


def test_unknown_keys_warn_but_load(tmp_path, caplog):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"rag": {"queryMod": "local", "enabled": True}, "extra": 1}))
    with caplog.at_level(logging.WARNING):
        config = RuntimeConfigStore(path).current()
    assert config.rag.enabled is True
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "rag.queryMod" in warnings and "'extra'" in warnings


def test_deleted_file_keeps_last_valid(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"llm": {"model": "kept"}}')
    store = RuntimeConfigStore(path)
    store.current()
    path.unlink()
    assert store.current().llm.model == "kept"


def test_secret_values_are_never_echoed_in_errors():
    with pytest.raises(ConfigError) as err:
        parse_runtime_config('{"rag": {"apiKey": 123456789}}')
    assert "123456789" not in str(err.value)
    assert "rag.apiKey" in str(err.value)
