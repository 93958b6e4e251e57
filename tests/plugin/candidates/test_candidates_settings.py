"""The candidate and consolidation settings (manifest + PluginSettings), and the one wording
of the memory policy (templates/memory_policy.yaml) in the tools and the injected prompt."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from memvault_plugin.memory_service import PluginSettings, SettingsError

from indexer.jobs.consolidate_select import ConsolidateSettings
from templates import read_template
from tests.helpers.paths import REPO
from tests.plugin.candidates_setup import ON, candidates_plugin, injected

PLUGIN = REPO / "plugin"
MANIFEST = yaml.safe_load((PLUGIN / "manifest.yaml").read_text("utf-8"))
CONFIG = {c["name"]: c for c in MANIFEST["spec"]["config"]}
POLICY = yaml.safe_load(read_template("memory_policy.yaml"))


def flat(text: str) -> str:
    return " ".join(text.split())


def test_candidates_are_off_and_consolidation_cautious_by_default():
    s = PluginSettings.from_config({})
    assert (s.candidates, s.candidates_model, s.candidates_per_turn) == (False, "", 3)
    assert s.candidates_auto_accept is False
    assert s.consolidation == ConsolidateSettings()
    assert s.consolidation.apply_profile_updates is False


@pytest.mark.parametrize(
    ("name", "kind", "default", "field"),
    [
        ("candidates", "boolean", False, "candidates"),
        ("candidates_model", "llm-model-selector", "", "candidates_model"),
        ("candidates_per_turn", "integer", 3, "candidates_per_turn"),
        ("candidates_auto_accept", "boolean", False, "candidates_auto_accept"),
        ("consolidation_older_than_days", "integer", 90, "older_than_days"),
        ("consolidation_max_importance", "integer", 1, "max_importance"),
        ("consolidation_keep_importance", "integer", 4, "keep_importance"),
        ("consolidation_max_episodes", "integer", 40, "max_episodes"),
        ("consolidation_apply_profile_updates", "boolean", False, "apply_profile_updates"),
    ],
)
def test_the_manifest_offers_each_setting_with_the_default_the_plugin_uses(
    name, kind, default, field
):
    item = CONFIG[name]
    assert (item["type"], item["default"], item["required"]) == (kind, default, False)
    assert item["label"]["en_US"] and item["label"]["zh_Hans"]
    assert item["description"]["en_US"] and item["description"]["zh_Hans"]
    s = PluginSettings.from_config({})
    where = s.consolidation if name.startswith("consolidation_") else s
    assert getattr(where, field) == default
    given_value = {"boolean": True, "integer": 5, "llm-model-selector": "m-1"}[kind]
    if name == "consolidation_max_importance":
        given_value = 3
    s = PluginSettings.from_config({name: given_value})
    where = s.consolidation if name.startswith("consolidation_") else s
    assert getattr(where, field) == given_value


@given(st.integers(-3, 20))
def test_candidates_per_turn_is_kept_from_1_to_10_and_refused_otherwise(value):
    if 1 <= value <= 10:
        assert (
            PluginSettings.from_config({"candidates_per_turn": value}).candidates_per_turn == value
        )
    else:
        with pytest.raises(SettingsError, match="candidates_per_turn must"):
            PluginSettings.from_config({"candidates_per_turn": value})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"consolidation_max_importance": 6}, "consolidation_max_importance must be from 0"),
        ({"consolidation_older_than_days": 0}, "consolidation_older_than_days must be at least"),
        ({"consolidation_max_episodes": 500}, "consolidation_max_episodes must be from 2 to 200"),
        ({"consolidation_keep_importance": 7}, "consolidation_keep_importance must be from 1"),
        ({"candidates": "yes please"}, "candidates must be true or false"),
        ({"candidates_per_turn": "many"}, "candidates_per_turn must be a number"),
    ],
)
def test_a_setting_out_of_bounds_is_refused_naming_it(config, message):
    with pytest.raises(SettingsError, match=message):
        PluginSettings.from_config(config)


def test_boolean_settings_read_true_and_false_written_as_text():
    s = PluginSettings.from_config({"candidates": "false", "candidates_auto_accept": "True"})
    assert (s.candidates, s.candidates_auto_accept) == (False, True)


# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize("tool", ["remember", "update_profile", "recall_memory"])
def test_each_tool_description_carries_the_policy_sentence_word_for_word(tool):
    spec = yaml.safe_load((PLUGIN / "components" / "tools" / f"{tool}.yaml").read_text("utf-8"))
    assert flat(POLICY[f"{tool}_tool"]["en_US"]) in flat(spec["spec"]["llm_prompt"])


async def test_the_injected_prompt_carries_the_policy_from_the_template(tmp_path, host):
    plugin = await candidates_plugin(host, tmp_path, **ON)
    try:
        text = await injected(plugin, host, "hello")
    finally:
        plugin.memory.close()
    assert flat(POLICY["injected"]["en_US"]) in flat(text)
    assert "low-frequency" not in text  # the old second wording is gone
