"""The words of an empty recall and of the recall test in every page language: the console
builds these keys from what the server sends (recall_why_<form>, recall_from_<source>,
block_<block>), so no literal names them for tests/console/test_i18n_keys.py to find."""

from __future__ import annotations

import json
import re

import pytest

from indexer.injection.route import ROUTE
from indexer.retrieval.outcome import FORMS
from tests.helpers.paths import REPO

WEB = REPO / "console" / "web"
LANGS = ("en_US", "zh_Hans", "zh_Hant", "ja_JP", "vi_VN", "th_TH", "es_ES")
SOURCES = ("langbot", "last_turn", "defaults")  # console.endpoints_recall._settings


def messages(lang: str) -> dict[str, str]:
    return json.loads((WEB / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


def names(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


def test_the_console_english_is_the_reasons_own_wording():
    """One sentence per reason: `!memory`, the tool and the console's English say the same."""
    en = messages("en_US")
    assert {form: en.get(f"recall_why_{form}") for form in FORMS} == dict(FORMS)


@pytest.mark.parametrize("lang", LANGS)
def test_every_reason_source_and_block_has_a_message(lang):
    have = messages(lang)
    wanted = [
        *(f"recall_why_{form}" for form in FORMS),
        *(f"recall_from_{source}" for source in SOURCES),
        *(f"block_{block}" for block, _ in ROUTE),
    ]
    assert [k for k in wanted if k not in have] == []
    differ = [f for f in FORMS if names(have[f"recall_why_{f}"]) != names(FORMS[f])]
    assert differ == []
