"""Every message the Memory Console shows exists in English and in Chinese, with the same
{placeholders}: a key missing from one file shows its raw name to that reader."""

from __future__ import annotations

import ast
import json
import re

import pytest

from tests.helpers.paths import REPO
from vault.candidates import CANDIDATE_KINDS, CANDIDATE_STATUSES, PROFILE_TARGETS
from vault.format.findings import HEALTH_CODES

WEB = REPO / "console" / "web"
LANGS = ("en_US", "zh_Hans")
# A key the page names literally (not the prefix of one it builds: 'status_' + name).
_LITERAL = r"'(\w+)'(?!\s*\+)"
NAMED = (
    re.compile(r"\bi18n:\s*" + _LITERAL),
    re.compile(r"\bt\(\s*" + _LITERAL),
    re.compile(r"MV\.tr\([^,()]+,\s*" + _LITERAL),
    re.compile(r"emptyState\(\s*" + _LITERAL),
    re.compile(r"\b(?:label|confirm|question):\s*" + _LITERAL),
    re.compile(r"showError\([^,()]+,\s*" + _LITERAL),  # the advice after a server's message
    re.compile(r"\bi18n:\s*[\w.]+\s*\?\s*" + _LITERAL),  # i18n: x ? 'a' : 'b'
    re.compile(r"\bi18n:\s*[\w.]+\s*\?\s*'\w+'\s*:\s*" + _LITERAL),
)


def messages(lang: str) -> dict[str, str]:
    return json.loads((WEB / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


def names(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


def named_in_page() -> set[str]:
    keys = set(re.findall(r'data-i18n="(\w+)"', (WEB / "index.html").read_text("utf-8")))
    for script in WEB.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        for pattern in NAMED:
            keys |= set(pattern.findall(text))
    return keys


def test_both_languages_have_the_same_keys_and_placeholders():
    en, zh = messages("en_US"), messages("zh_Hans")
    assert sorted(set(en) - set(zh)) == [] and sorted(set(zh) - set(en)) == []
    differ = [k for k in en if names(en[k]) != names(zh[k])]
    assert differ == []
    assert [k for k in en if not en[k].strip() or not zh[k].strip()] == []


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_the_page_names_is_translated(lang):
    found = named_in_page()
    assert {"tab_candidates", "cand_accept", "cand_edit_accept", "cand_reject"} <= found
    assert sorted(found - set(messages(lang))) == []


@pytest.mark.parametrize("lang", LANGS)
def test_the_candidates_panel_has_a_message_for_every_state_the_vault_writes(lang):
    """candidates.js builds these keys from what /candidates answers: each status, kind and
    profile target vault.candidates knows, each filter and each decision."""
    have = messages(lang)
    wanted = [
        *(f"cand_status_{s}" for s in CANDIDATE_STATUSES),
        *(f"cand_filter_{s}" for s in (*CANDIDATE_STATUSES, "all")),
        *(f"cand_none_{s}" for s in (*CANDIDATE_STATUSES, "all")),
        *(f"cand_kind_{k}" for k in CANDIDATE_KINDS),
        *(f"cand_profile_{p}" for p in PROFILE_TARGETS),
        *(f"cand_decided_{s}" for s in CANDIDATE_STATUSES if s != "pending"),
        "cand_done_accept",
        "cand_done_reject",
    ]
    assert [k for k in wanted if k not in have] == []
    assert names(have["cand_done_accept"]) == {"id", "as"}


# -- Health, score lines and conflicts: what the page builds from the server's codes ---------


@pytest.mark.parametrize("lang", LANGS)
def test_every_health_line_the_server_can_send_has_a_message(lang):
    """health.js shows a line as `health_<code>` filled from its params (vault.format.findings): a
    code without a message in this language, or a message naming another parameter, would
    show the raw key or a literal {name} to its reader."""
    have = messages(lang)
    missing = [c for c in HEALTH_CODES if f"health_{c}" not in have]
    assert missing == []
    differ = {c: sorted(names(have[f"health_{c}"]) ^ set(p)) for c, p in HEALTH_CODES.items()}
    assert {c: d for c, d in differ.items() if d} == {}


@pytest.mark.parametrize("lang", LANGS)
def test_every_health_card_title_is_translated(lang):
    from console.endpoints_health import TITLE_KEYS, TITLES

    keys = [TITLE_KEYS.get(card, f"health_card_{card}") for card in TITLES]
    assert [k for k in keys if k not in messages(lang)] == []


@pytest.mark.parametrize("lang", LANGS)
def test_every_part_of_a_real_score_explanation_is_named(lang, ctx):
    """explain.js names each list, factor and key segment of `explain` in the reader's
    language: taken from a real search, so a new score component fails here untranslated."""
    from console.api import dispatch
    from indexer.retrieval.ranking import FACTORS
    from tests.console.conftest import A, scope_body

    found = dispatch(ctx, "/search", {"scope": scope_body(A), "query": "Alice Beijing"})
    explain = found["items"][0]["explain"]
    segments: set[str] = set()

    def walk(value: object, prefix: tuple[str, ...]) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, (*prefix, key))
        else:
            segments.update(prefix)

    walk(explain, ())
    have = messages(lang)
    wanted = [
        *(f"explain_part_{s}" for s in sorted(segments)),
        *(f"explain_src_{s}" for s in explain["sources"]),
        *(f"explain_{f}" for f in ("relevance", *FACTORS)),
    ]
    assert "sources" in segments and {"text", "vector"} <= set(explain["sources"])
    assert [k for k in wanted if k not in have] == []
    assert names(have["explain_rank"]) == {"list", "rank"}
    assert names(have["explain_factor"]) == {"factor", "value"}


def _code_calls(tree: ast.AST, helper: bool) -> list[tuple[str, set[str] | None, int]]:
    """(code, parameter names or None when not literal, line) of each Check(level, message,
    code, {params}) call, and with `helper` (indexer/probe.py) of its _fail(message, code,
    **params)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        if node.func.id == "Check" and len(node.args) >= 3:
            code, rest = node.args[2], node.args[3:]
            params: set[str] | None = set()
            if rest:
                given = rest[0]
                literal = isinstance(given, ast.Dict) and all(
                    isinstance(k, ast.Constant) for k in given.keys
                )
                params = {k.value for k in given.keys} if literal else None  # type: ignore[union-attr]
        elif helper and node.func.id == "_fail" and len(node.args) >= 2:
            code, params = node.args[1], {k.arg for k in node.keywords if k.arg}
        else:
            continue
        if isinstance(code, ast.Constant) and isinstance(code.value, str):
            found.append((code.value, params, node.lineno))
    return found


def test_every_health_code_in_the_source_is_in_the_vocabulary():
    """Each check the code can say is a code of HEALTH_CODES with exactly its parameters:
    the messages above are then the whole story (no code the page cannot show)."""
    repo = WEB.parents[1]
    wrong, seen = [], set()
    for folder in ("vault", "indexer", "console"):
        for path in sorted((repo / folder).rglob("*.py")):  # sub-packages too
            tree = ast.parse(path.read_text("utf-8"))
            for code, params, line in _code_calls(tree, path.name == "probe.py"):
                seen.add(code)
                expected = HEALTH_CODES.get(code)
                if expected is None or (params is not None and params != set(expected)):
                    wrong.append(f"{path.name}:{line}: {code} {sorted(params or ())}")
    assert wrong == []
    # the scan does read the checks (a scan that finds nothing would pass anything)
    assert {"vault_writable", "files_problems", "hand_edits", "probe_pass", "watch_limits"} <= seen


@pytest.mark.parametrize("lang", LANGS)
def test_conflict_and_layout_messages_exist(lang):
    """Keys the page builds or passes on in ways the patterns above do not all catch."""
    have = messages(lang)
    wanted = ["choose_scope", "choose_scope_narrow", "active_memories", "expired", "expired_since",
              "conflict_edit_kept", "conflict_typed_kept", "conflict_reloaded", "conflict_kept",
              "conflict_disk_loaded", "conflict_mine", "conflict_copy_mine",
              "conflict_load_disk", "conflict_use_mine"]  # fmt: skip
    assert [k for k in wanted if k not in have] == []
    # The narrow screen has no list "on the left": its sentence points at the ☰ button.
    assert "☰" in have["choose_scope_narrow"]
