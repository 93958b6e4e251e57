"""`memvault consolidate preview|run` end to end: real vault, index, model, git; a FAKE LLM."""

from __future__ import annotations

import json

import pytest

from memvault_cli.main import main
from tests.conftest import git
from tests.helpers.consolidate_helpers import CHAT, seed, tree_hash
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

SCOPE = ["--bot", CHAT.bot or "", "--session", CHAT.session]
ANSWER = {"summary": "Alice went to Beijing; Dave drinks oat flat whites.", "tags": []}


def saved(vault: Vault) -> dict[str, str]:
    return tree_hash(vault.root, under="bots") | tree_hash(vault.root, under=".git")


def cli(vault: Vault, *args: str) -> int:
    return main([*args, "--vault", str(vault.root)])


@pytest.fixture
def llm_env(fake_llm, monkeypatch):
    for name, value in fake_llm.env().items():
        monkeypatch.setenv(name, value)
    return fake_llm


def test_run_without_a_preview_refuses_and_says_what_to_do(vault, capsys):
    seed(vault, CHAT)
    before = saved(vault)
    assert cli(vault, "consolidate", "run", *SCOPE) == 2
    err = capsys.readouterr().err
    assert "memvault consolidate preview --bot bot-1 --session group_1 --out preview.json" in err
    assert "--preview preview.json" in err and saved(vault) == before


def test_preview_without_an_llm_configured_names_the_variable(vault, capsys, monkeypatch):
    monkeypatch.delenv("MEMVAULT_LLM_URL", raising=False)
    monkeypatch.delenv("MEMVAULT_LLM_MODEL", raising=False)
    assert cli(vault, "consolidate", "preview", *SCOPE) == 2
    assert "MEMVAULT_LLM_URL" in capsys.readouterr().err


def test_preview_then_run_applies_it_once(vault, llm_env, tmp_path, capsys):
    s = seed(vault, CHAT)
    llm_env.script(ANSWER)
    out = tmp_path / "preview.json"
    before = saved(vault)
    assert cli(vault, "consolidate", "preview", *SCOPE, "--out", str(out)) == 0
    text = capsys.readouterr().out
    assert saved(vault) == before
    assert f"consolidate run --bot bot-1 --session group_1 --preview {out}" in text
    for original in (s.old, s.chatter, s.superseded):
        assert original.id in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["digest"] in text and data["summary"]["text"] == ANSWER["summary"]
    count = len(git(vault.root, "log", "--oneline").splitlines())
    assert cli(vault, "consolidate", "run", *SCOPE, "--preview", str(out), "--json") == 0
    done = json.loads(capsys.readouterr().out)
    assert len(git(vault.root, "log", "--oneline").splitlines()) == count + 1
    assert sorted(done["archived"]) == sorted([s.old.id, s.chatter.id, s.superseded.id])
    assert cli(vault, "search", "Alice Beijing", *SCOPE, "--json") == 0
    found = [item["id"] for item in json.loads(capsys.readouterr().out)]
    assert done["summary"] in found and s.old.id not in found
    # The same preview again: what it selected has changed (archived), so it is refused.
    after = saved(vault)
    # A conflict (vault.errors, exit 3): the chat changed since the preview.
    assert cli(vault, "consolidate", "run", *SCOPE, "--preview", str(out)) == 3
    assert "make a new preview" in capsys.readouterr().err and saved(vault) == after


def test_a_preview_file_edited_by_hand_is_refused(vault, llm_env, tmp_path, capsys):
    seed(vault, CHAT)
    llm_env.script(ANSWER)
    out = tmp_path / "p.json"
    assert cli(vault, "consolidate", "preview", *SCOPE, "--out", str(out)) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    data["summary"]["text"] = "Not what the model said."
    out.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    before = saved(vault)
    assert cli(vault, "consolidate", "run", *SCOPE, "--preview", str(out)) == 2
    assert "does not match its digest" in capsys.readouterr().err and saved(vault) == before


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--older-than", "30d"], "other settings (older_than_days)"),
        (["--apply-profile-updates"], "other settings (apply_profile_updates)"),
        (["--session", "group_9"], "that preview is for bot-1:group_1"),
    ],
)
def test_run_applies_the_preview_as_made_or_not_at_all(
    vault, llm_env, tmp_path, capsys, extra, message
):
    seed(vault, CHAT)
    llm_env.script(ANSWER)
    out = tmp_path / "p.json"
    assert cli(vault, "consolidate", "preview", *SCOPE, "--out", str(out)) == 0
    capsys.readouterr()
    before = saved(vault)
    assert cli(vault, "consolidate", "run", *SCOPE, "--preview", str(out), *extra) == 2
    assert message in capsys.readouterr().err and saved(vault) == before


def test_a_preview_is_not_saved_inside_the_vault(vault, llm_env, capsys):
    seed(vault, CHAT)
    target = vault.root / "bots" / "p.json"
    assert cli(vault, "consolidate", "preview", *SCOPE, "--out", str(target)) == 2
    assert "outside the vault" in capsys.readouterr().err and not target.exists()
    assert llm_env.requests == []  # refused before the model was asked


def test_nothing_to_consolidate_is_said_and_asks_no_model(vault, llm_env, capsys):
    vault.remember(NewEpisode(CHAT, "Erin is learning the violin.", importance=3))
    assert cli(vault, "consolidate", "preview", *SCOPE, "--older-than", "12w") == 0
    assert "nothing to consolidate" in capsys.readouterr().out
    assert llm_env.requests == []
