"""MemVault speaks the languages LangBot's official plugins do (the SDK's I18nString: en_US,
zh_Hans, zh_Hant, ja_JP, vi_VN, th_TH, es_ES) everywhere LangBot shows it: the manifest's
label, description and every setting, each component's yaml, the plugin README (LangBot asks
for readme/README_<lang>.md, English is README.md) and the Memory Console page (its SDK
loads i18n/<lang>.json). A key or language missing anywhere fails here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from langbot_plugin.api.definition.components.manifest import I18nString

from tests.helpers.paths import REPO

PLUGIN = REPO / "plugin"
WEB = REPO / "console" / "web"
LANGS = tuple(I18nString.model_fields)
YAMLS = [PLUGIN / "manifest.yaml", *sorted((PLUGIN / "components").rglob("*.yaml"))]


def test_the_languages_are_langbots_seven():
    assert LANGS == ("en_US", "zh_Hans", "zh_Hant", "ja_JP", "th_TH", "vi_VN", "es_ES")


def i18n_objects(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every LangBot I18nString in a yaml document (a mapping with an en_US key)."""
    if isinstance(node, dict):
        if "en_US" in node:
            yield where, node
            return
        for key, value in node.items():
            yield from i18n_objects(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            name = value.get("name", i) if isinstance(value, dict) else i
            yield from i18n_objects(value, f"{where}[{name}]")


def _required(doc: dict[str, Any]) -> list[str]:
    """Where LangBot shows text to a person: metadata and every setting of a form."""
    spec = doc.get("spec") or {}
    wanted = ["metadata.label", "metadata.description"]
    for form in ("config", "creation_schema"):
        for item in spec.get(form) or []:
            wanted += [f"spec.{form}[{item['name']}].label"]
            if "description" in item:
                wanted += [f"spec.{form}[{item['name']}].description"]
            wanted += [
                f"spec.{form}[{item['name']}].options[{o['name']}].label"
                for o in item.get("options") or []
            ]
    return wanted


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.relative_to(PLUGIN).as_posix())
def test_every_label_and_description_is_in_every_language(path):
    doc = yaml.safe_load(path.read_text("utf-8"))
    found = dict(i18n_objects(doc, "")) if isinstance(doc, dict) else {}
    found = {k.lstrip("."): v for k, v in found.items()}
    assert sorted(set(_required(doc)) - set(found)) == []  # not left a plain string
    missing = {
        where: sorted(set(LANGS) - {k for k, v in obj.items() if isinstance(v, str) and v.strip()})
        for where, obj in found.items()
    }
    assert {where: langs for where, langs in missing.items() if langs} == {}
    unknown = {where: sorted(set(obj) - set(LANGS)) for where, obj in found.items()}
    assert {where: keys for where, keys in unknown.items() if keys} == {}
    # ... and the SDK keeps each of them (its I18nString drops nothing it does not know)
    for obj in found.values():
        assert set(I18nString.model_validate(obj).to_dict()) == set(LANGS)


def test_the_manifest_has_many_settings_to_check():
    """The walk above reads every setting (a walk that found none would pass anything)."""
    doc = yaml.safe_load((PLUGIN / "manifest.yaml").read_text("utf-8"))
    assert len(doc["spec"]["config"]) >= 20
    assert len(dict(i18n_objects(doc, ""))) >= 2 + 2 * len(doc["spec"]["config"])
    assert doc["metadata"]["repository"].startswith("https://")


# -- READMEs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", [lang for lang in LANGS if lang != "en_US"])
def test_a_readme_in_each_language(lang):
    """LangBot's plugin page asks the runtime for readme/README_<lang>.md and falls back to
    README.md (the English one, also what it serves for en_US)."""
    text = (PLUGIN / "readme" / f"README_{lang}.md").read_text("utf-8")
    english = (PLUGIN / "README.md").read_text("utf-8")
    assert text.startswith("# MemVault") and text != english
    # the essentials a reader looks up: each setting by name, the command, the tools
    doc = yaml.safe_load((PLUGIN / "manifest.yaml").read_text("utf-8"))
    names = [item["name"] for item in doc["spec"]["config"]]
    tools = [p.stem for p in (PLUGIN / "components" / "tools").glob("*.yaml")]
    assert [n for n in [*names, *tools, "!memory", "memvault"] if n not in text] == []


def test_no_english_copy_under_readme():
    # README_en_US.md would be README.md twice in the package (LangBot never asks for it)
    assert not (PLUGIN / "readme" / "README_en_US.md").exists()


# -- the Memory Console page ------------------------------------------------------------------


def messages(lang: str) -> dict[str, str]:
    return json.loads((WEB / "i18n" / f"{lang}.json").read_text("utf-8"))


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


@pytest.mark.parametrize("lang", LANGS[1:])
def test_each_page_language_has_every_message_with_its_placeholders(lang):
    en, other = messages("en_US"), messages(lang)
    assert len(en) > 300
    assert sorted(set(en) - set(other)) == [] and sorted(set(other) - set(en)) == []
    assert [k for k, v in other.items() if not isinstance(v, str) or not v.strip()] == []
    assert [k for k in en if placeholders(en[k]) != placeholders(other[k])] == []


@pytest.mark.parametrize("lang", LANGS[2:])
def test_a_new_language_is_translated_not_copied(lang):
    """At most a few messages may equal the English (names such as "Git", "ID", "JSON")."""
    en, other = messages("en_US"), messages(lang)
    same = [k for k in en if other[k] == en[k] and re.search(r"[a-z]{4}", en[k])]
    assert len(same) <= len(en) // 20, same[:20]


def test_the_page_offers_and_loads_every_language():
    ui = (WEB / "ui.js").read_text("utf-8")
    sdk = (WEB / "standalone-sdk.js").read_text("utf-8")
    html = (WEB / "index.html").read_text("utf-8")
    for source in (ui, sdk):
        (listed,) = re.findall(r"LANGS = \[([^\]]*)\]", source)
        assert tuple(re.findall(r"'(\w+)'", listed)) == tuple(LANGS[:2]) + (
            "zh_Hant", "ja_JP", "vi_VN", "th_TH", "es_ES")  # fmt: skip
    select = re.search(r'<select id="lang-select".*?</select>', html, re.S).group(0)
    assert set(re.findall(r'<option value="(\w+)"', select)) == set(LANGS)
    assert {p.stem for p in (WEB / "i18n").glob("*.json")} == set(LANGS)
