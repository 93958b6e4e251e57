"""Issue 20, item 2: text sent to a model leaves the machine, so it is redacted before it is
sent: candidate extraction (the chat turn as the host gave it, the speakers' names, the
profiles) and consolidation (a person's hand-written memory: its speaker, tags and key, and
hand-written profiles). The FAKE LLM (tests/helpers/llm_fake.py) records every request; the scan
reads them in any letter case. The index, which recall and injection send from, holds the
redacted text of a hand-written file too."""

from __future__ import annotations

import pytest

from indexer.engine import Engine
from indexer.jobs.candidates_extract import Turn, extract
from indexer.jobs.consolidate import preview
from indexer.jobs.consolidate_select import ConsolidateSettings
from indexer.retrieval.search_query import SearchQuery
from tests.conftest import git
from tests.helpers.consolidate_helpers import CHAT, DAY, NOW, answer, seed
from tests.helpers.secret_scan import everywhere, places_holding
from vault.format.model import Speaker
from vault.writes.operations import Vault

AWS = "AKIAIOSFODNN7EXAMPLE"
CAP_KEY = "Sk-Proj-Xy12Ab34Cd56Ef78Gh90"
NATIONAL_ID = "11010519491231002X"
PASSWORD = "Hunter2-Zq81x"
SECRETS = (AWS, CAP_KEY, NATIONAL_ID, PASSWORD)


@pytest.fixture
def engine(vault: Vault):
    with Engine.open(vault.root) as opened:
        opened.attach(vault)
        yield opened


def hand_written_profile(vault: Vault) -> None:
    path = vault.profile_path(CHAT, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"notes: the CI uses {AWS}\ntraits:\n  - id {NATIONAL_ID}\n", encoding="utf-8")


def hand_written_episode(vault: Vault) -> str:
    folder = vault.layout.session_dir(CHAT) / "episodes" / "2025" / "01"
    folder.mkdir(parents=True)
    (folder / "ep_20250101_hand01.md").write_text(
        "---\nid: ep_20250101_hand01\ncreated_at: 2025-01-01T00:00:00Z\nimportance: 1\n"
        f"speaker: {{id: u9, name: 'Erin {NATIONAL_ID}'}}\ntags: [ops, '{CAP_KEY}']\n"
        f"key: 'deploy {AWS}'\n---\nErin set up the deploy server.\n",
        encoding="utf-8",
    )
    git(vault.root, "add", "-A")
    git(vault.root, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-qm", "mine")
    return "ep_20250101_hand01"


def test_candidate_extraction_sends_the_model_no_secret(vault, engine, fake_llm):
    hand_written_profile(vault)
    extract(
        fake_llm.llm(),
        vault,
        engine,
        CHAT,
        Speaker("u42", f"Alice {CAP_KEY}"),
        f"my ID card number is {NATIONAL_ID} and the wifi password is {PASSWORD}",
        f"Noted, I won't share {NATIONAL_ID}.",
        [Turn("user", f"the key is {AWS}", "u7", f"Bob {CAP_KEY}"), Turn("assistant", "ok")],
        model_name="fake-llm",
    )
    assert len(fake_llm.requests) == 1
    assert everywhere(SECRETS, requests=fake_llm.requests) == {}
    sent = fake_llm.requests[0]["messages"][1]["content"]
    assert "[redacted:national_id]" in sent and "[redacted:password]" in sent


def test_consolidation_sends_the_model_no_secret_of_a_hand_written_file(vault, engine, fake_llm):
    seed(vault, CHAT)
    hand = hand_written_episode(vault)
    hand_written_profile(vault)
    fake_llm.script(answer())
    made = preview(fake_llm.llm(), vault, engine, CHAT, ConsolidateSettings(), now=NOW + DAY)
    # The secret-bearing file itself is left out (archiving it would commit it again:
    # vault.git.secret_guard), so its text never reaches the model; the rest is consolidated
    # and the hand-written profile sent with it is redacted.
    assert hand not in [pick.id for pick in made.archive] and len(made.archive) >= 2
    (why,) = [why for rel, why in made.skipped if rel.endswith(f"{hand}.md")]
    assert "holds what looks like a secret" in why
    assert len(fake_llm.requests) == 1
    assert everywhere(SECRETS, requests=fake_llm.requests) == {}
    sent = str(fake_llm.requests[0]["messages"])
    assert "[redacted:api_key]" in sent and "[redacted:national_id]" in sent  # the profile


def test_the_index_holds_no_secret_of_a_hand_written_file(vault, engine):
    hand_written_episode(vault)
    hand_written_profile(vault)
    engine.reconcile()
    (hit,) = engine.search(SearchQuery("deploy server", CHAT, top_k=1))
    assert hit.doc.speaker_name == "Erin [redacted:national_id]"
    assert "[redacted:api_key]" in hit.doc.tags
    for secret in SECRETS:
        assert places_holding(vault.root / ".memvault", secret) == []
