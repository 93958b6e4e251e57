"""Hostile input is bad input, never an internal error (issue 20, item 7): JSON nested a
thousand levels deep, numbers past any range, broken \\u escapes, YAML alias bombs and deep
front matter. Every JSON entry point reads through vault.format.jsonin and every YAML one through
vault.format.yamlio, within the limits of vault.format.input_limits; these tests go through the
doors a
person uses (the CLI in-process, the syncer and `check` over real files, the LLM reply
parser; the console and the plugin have their own files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer.jobs.llm import LLMError, parse_json_reply
from tests.helpers.cli_run import run_main
from tests.indexer.sync.test_sync import open_syncer, paths_found
from vault.format.input_limits import MAX_JSON_DEPTH, MAX_YAML_DEPTH
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "g1")
SCOPE = ["--bot", "b1", "--session", "g1"]
EPISODES = "bots/b1/sessions/g1/episodes/2026/11"


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


# name: (JSON text, words the message must hold)
HOSTILE_JSON = {
    "a list 1,200 deep": (nested(1200), f"nests deeper than {MAX_JSON_DEPTH} levels (line 1"),
    "deep in an item's extra": (
        '{"episodes": [{"content": "x", "extra": {"a": ' + nested(900) + "}}]}",
        "the value at $.episodes[0].extra.a",
    ),
    "deep, but under Python's limit": (
        '{"episodes": [{"content": "x", "extra": {"a": ' + nested(300) + "}}]}",
        f"nests deeper than {MAX_JSON_DEPTH} levels",
    ),
    "deep in a profile": (
        '{"profiles": [{"type": "session", "profile": {"extra": {"a": ' + nested(900) + "}}}]}",
        "the value at $.profiles[0].profile.extra.a",
    ),
    "an integer of 5,000 digits": (
        '{"episodes": [{"content": "x", "importance": ' + "9" * 5000 + "}]}",
        "a number of 5000 digits",
    ),
    "1e999": ('{"episodes": [{"content": "x", "confidence": 1e999}]}', "too large"),
    "NaN": ('{"episodes": [{"content": "x", "importance": NaN}]}', "NaN, which is not"),
    "a lone surrogate": (
        '{"episodes": [{"content": "a\\ud800b"}]}',
        "$.episodes[0].content holds \\ud800",
    ),
}


def run(vault: Vault, *argv: str) -> tuple[int, str]:
    ran = run_main(*argv, "--vault", vault.root)
    return ran.returncode, ran.stdout + ran.stderr


@pytest.mark.parametrize("name", HOSTILE_JSON)
def test_import_of_hostile_json_exits_2_naming_the_problem(capsys, vault, tmp_path, name):
    text, words = HOSTILE_JSON[name]
    path = tmp_path / "hostile.json"
    path.write_text(text, encoding="utf-8")
    code, said = run(vault, "import", str(path), *SCOPE)
    assert code == 2, said
    assert words in said and str(path) in said, said
    assert "internal error" not in said and "Traceback" not in said
    assert vault.load_episodes(CHAT)[0] == []  # nothing half-imported


def test_an_export_at_the_deepest_readable_front_matter_imports_again(capsys, vault, tmp_path):
    """The limits fit each other: a hand-written file as deep as a front matter may be
    exports to JSON that import takes (the JSON limit leaves room for the envelope)."""
    folder = vault.root / EPISODES
    folder.mkdir(parents=True)
    value = nested(MAX_YAML_DEPTH - 1, "x")  # the front matter mapping is level 1
    (folder / "deep.md").write_text(f"---\nid: ep_deep\nshape: {value}\n---\nDeep\n")
    assert run(vault, "export", *SCOPE, "--out", str(tmp_path / "e.json"))[0] == 0
    other = ["--bot", "b1", "--session", "g2"]
    code, said = run(vault, "import", str(tmp_path / "e.json"), *other)
    assert (code, said.strip()) == (0, "imported 1 episode(s), 0 already present")


# --------------------------------------------------------------------------- hand-written

LAUGHS = "lol: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [*{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}]\n"
    for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)
# file name: (file text, line reported, words of the message)
HOSTILE_FILES = {
    "deep.md": (f"---\nid: ep_d\nx: {nested(600)}\n---\nDeep\n", 3, "nests deeper than 32"),
    "deeper.md": (f"---\nid: ep_e\nx: {nested(5000)}\n---\nDeeper\n", 3, "nests deeper"),
    "laughs.md": (
        f"---\nid: ep_l\n{LAUGHS}---\nLaughs\n",
        3,
        "more than 100,000 values once its aliases (*name) are expanded",
    ),
    "tags.md": (
        "---\nid: ep_t\ntags: [" + ",".join(f"t{i}" for i in range(110_000)) + "]\n---\nT\n",
        3,
        "more than 100,000 values: simplify it",
    ),
    "long.md": ("---\nid: ep_w\n---\n" + "word " * 400_000 + "\n", 1, "file is 2.0 MB"),
}
DEEP_PROFILE = f"name: Deep\nnotes: {nested(400)}\n"


def hostile_vault(root: Path) -> dict[str, bytes]:
    """A good memory, the hostile files and a deep profile; their bytes, by path."""
    files = {f"{EPISODES}/good.md": "---\nid: ep_good\n---\nBob likes green tea\n"}
    files |= {f"{EPISODES}/{name}": text for name, (text, _, _) in HOSTILE_FILES.items()}
    files["bots/b1/sessions/g1/profile.yaml"] = DEEP_PROFILE
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return {rel: (root / rel).read_bytes() for rel in files}


def test_check_reports_each_hostile_file_and_reads_the_rest(vault):
    before = hostile_vault(vault.root)
    report = check_vault(vault.root)
    found = {p.path: (p.line, p.message) for p in report.problems}
    for name, (_, line, words) in HOSTILE_FILES.items():
        assert found[f"{EPISODES}/{name}"][0] == line, found
        assert words in found[f"{EPISODES}/{name}"][1], found
    assert "nests deeper than 32" in found["bots/b1/sessions/g1/profile.yaml"][1]
    assert [s.episode.id for s in vault.load_episodes(CHAT)[0]] == ["ep_good"]
    assert {rel: (vault.root / rel).read_bytes() for rel in before} == before  # untouched


def test_a_hostile_audit_line_is_a_problem_line_not_a_crash(capsys, vault):
    vault.remember(NewEpisode(CHAT, "Bob likes green tea"))
    log = vault.layout.audit_path(CHAT)
    good = log.read_text(encoding="utf-8")
    log.write_text(good + nested(2000) + "\n", encoding="utf-8")
    code, said = run(vault, "check")
    assert code == 1 and "audit.jsonl:2: not an audit entry" in said, said
    assert "nests deeper than" in said and "internal error" not in said


@pytest.fixture(scope="module")
def embedder():
    from indexer.backends.embeddings import default_embedder

    return default_embedder()


def test_sync_skips_hostile_files_and_indexes_the_rest(vault, embedder):
    before = hostile_vault(vault.root)
    syncer, _ = open_syncer(vault.root, embedder)
    try:
        errors = {p.path for p in syncer.reconcile().errors}
        assert errors == set(before) - {f"{EPISODES}/good.md"}
        found = paths_found(syncer, "green tea", user_key=CHAT.index_key)
        assert found["text"] == {f"{EPISODES}/good.md"}
        # A file changed to a hostile one while watched is reported the same way.
        (vault.root / EPISODES / "good.md").write_text(HOSTILE_FILES["deep.md"][0])
        report = syncer.sync_paths([f"{EPISODES}/good.md"])
        assert [(p.path, p.line) for p in report.errors] == [(f"{EPISODES}/good.md", 3)]
    finally:
        syncer.close()
    assert {rel: (vault.root / rel).read_bytes() for rel in before if "good" not in rel} == {
        rel: data for rel, data in before.items() if "good" not in rel
    }


# --------------------------------------------------------------------------- model answers


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (nested(3000), f"nests deeper than {MAX_JSON_DEPTH} levels"),
        ("Here it is: " + nested(500), f"nests deeper than {MAX_JSON_DEPTH} levels"),
        ('{"candidates": [{"importance": 1e999}]}', "inf, not a number"),
    ],
)
def test_a_model_answer_past_the_limits_is_an_llm_error(answer, words):
    with pytest.raises(LLMError) as caught:
        parse_json_reply(answer)
    assert words in str(caught.value)


def test_ordinary_json_still_reads(capsys, vault, tmp_path):
    path = tmp_path / "ok.json"
    item = {"content": "x", "extra": {"a": json.loads(nested(MAX_YAML_DEPTH - 1))}}
    path.write_text(json.dumps({"episodes": [item]}), encoding="utf-8")
    assert run(vault, "import", str(path), *SCOPE)[0] == 0
    assert parse_json_reply('```json\n{"a": [1, 2.5, "x"]}\n```') == {"a": [1, 2.5, "x"]}


def test_an_import_file_past_the_size_limit_is_refused_unread(capsys, vault, tmp_path, monkeypatch):
    monkeypatch.setattr("vault.cli.transfer.MAX_IMPORT_BYTES", 1_000)  # 200 MB in earnest
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"content": f"memory {n}"} for n in range(200)]), "utf-8")
    code, said = run(vault, "import", str(path), *SCOPE)
    assert code == 2 and f"{path} is larger than 0.001 MB: split it into parts" in said, said
    assert vault.load_episodes(CHAT)[0] == []
