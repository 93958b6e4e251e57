"""`memvault candidates ...` end to end: the console script's own main(), a real vault,
indexes and git, and the loopback FAKE LLM (tests/helpers/llm_fake.py) behind MEMVAULT_LLM_*."""

from __future__ import annotations

import json

import pytest

from memvault_cli.main import main
from tests.conftest import git
from tests.helpers.llm_fake import Reply
from vault.candidates import list_candidates
from vault.layout.keys import ScopeId

CHAT = ScopeId("bot-1", "group_1")
FLAGS = ["--bot", "bot-1", "--session", "group_1"]
PLAN = "Alice flies to Tokyo on 12 March for the robotics fair."


@pytest.fixture
def transcript(tmp_path):
    path = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "hi all", "speaker_id": "u42", "speaker_name": "Alice"},
        {"role": "assistant", "content": "Hello Alice!"},
        {
            "role": "user",
            "content": "I fly to Tokyo on March 12 for the robotics fair",
            "speaker_id": "u42",
            "speaker_name": "Alice",
        },
        {"role": "assistant", "content": "Have a good trip!"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def llm_env(fake_llm, monkeypatch):
    for name, value in fake_llm.env().items():
        monkeypatch.setenv(name, value)
    return fake_llm


def cli(vault, *args):
    return main(["--vault", str(vault.root), *args])


def test_extract_replays_each_turn_and_prints_the_candidates(vault, llm_env, transcript, capsys):
    llm_env.script({"candidates": []}, {"candidates": [{"kind": "episode", "text": PLAN}]})
    head = git(vault.root, "rev-parse", "HEAD")
    code = cli(vault, "candidates", "extract", *FLAGS, "--transcript", str(transcript), "--dry-run")
    out = capsys.readouterr().out
    assert code == 0
    assert "turn 1: hi all\n  nothing worth remembering" in out
    assert "turn 2: I fly to Tokyo" in out and PLAN in out and "(not saved)" in out
    assert len(llm_env.requests) == 2
    assert git(vault.root, "rev-parse", "HEAD") == head  # a dry run writes nothing
    assert list_candidates(vault, CHAT).total == 0


def test_extract_then_list_then_accept_then_search(vault, llm_env, transcript, capsys):
    llm_env.script({"candidates": [{"kind": "episode", "text": PLAN}]})
    code = cli(vault, "candidates", "extract", *FLAGS, "--transcript", str(transcript), "--last")
    assert code == 0
    capsys.readouterr()
    assert cli(vault, "--json", "candidates", "list", *FLAGS) == 0
    (item,) = json.loads(capsys.readouterr().out)["items"]
    assert (item["text"], item["status"], item["proposed_by"]) == (PLAN, "pending", "fake-llm")
    assert item["speaker"] == {"id": "u42", "name": "Alice"}
    assert cli(vault, "search", "Tokyo robotics fair", *FLAGS) == 0
    assert PLAN not in capsys.readouterr().out  # pending: never found
    assert cli(vault, "candidates", "accept", *FLAGS, item["id"]) == 0
    assert "accepted as ep_" in capsys.readouterr().out
    assert cli(vault, "search", "Tokyo robotics fair", *FLAGS) == 0
    assert PLAN in capsys.readouterr().out


def test_reject_and_purge_from_the_cli(vault, llm_env, transcript, capsys):
    llm_env.script({"candidates": [{"kind": "episode", "text": PLAN}]})
    cli(vault, "--json", "candidates", "extract", *FLAGS, "--transcript", str(transcript), "--last")
    (turn,) = json.loads(capsys.readouterr().out)["turns"]
    cid = turn["candidates"][0]["id"]
    assert cli(vault, "candidates", "reject", *FLAGS, cid) == 0
    assert cli(vault, "candidates", "show", *FLAGS, cid) == 0
    assert "rejected" in capsys.readouterr().out
    assert cli(vault, "candidates", "purge", "--older-than", "30d") == 0
    assert "purged 0" in capsys.readouterr().out  # rejected just now: kept
    assert cli(vault, "candidates", "purge", "--older-than", "0d", *FLAGS) == 0
    assert "purged 1" in capsys.readouterr().out
    assert cli(vault, "candidates", "show", *FLAGS, cid) == 2
    assert f"no candidate {cid}" in capsys.readouterr().err


def test_extract_without_an_endpoint_says_which_variable_to_set(
    vault, transcript, capsys, monkeypatch
):
    for name in ("MEMVAULT_LLM_URL", "MEMVAULT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    code = cli(vault, "candidates", "extract", *FLAGS, "--transcript", str(transcript))
    assert code == 2
    assert "MEMVAULT_LLM_URL and MEMVAULT_LLM_MODEL" in capsys.readouterr().err


def test_a_bad_transcript_line_is_named(vault, llm_env, tmp_path, capsys):
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n{"role": "bot"}\n', encoding="utf-8")
    assert cli(vault, "candidates", "extract", *FLAGS, "--transcript", str(path)) == 2
    assert f"{path}:2: not a message" in capsys.readouterr().err


def test_a_failing_model_exits_4_and_writes_nothing(vault, llm_env, transcript, capsys):
    llm_env.script(Reply(status=500))
    head = git(vault.root, "rev-parse", "HEAD")
    code = cli(vault, "candidates", "extract", *FLAGS, "--transcript", str(transcript), "--last")
    assert code == 4  # unavailable (vault.errors): the provider refused
    assert "HTTP 500" in capsys.readouterr().err
    assert git(vault.root, "rev-parse", "HEAD") == head
