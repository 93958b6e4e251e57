"""The `memvault` command as a person uses it (issue 15, "The CLI as people use it"): the
command in-process (tests/helpers/cli_run.py), a real `memvault watch` process beside it, real
files and indexes; a lock held by another pid needs a real process (the closed pipe:
tests/integration/test_entry_point.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.api import dispatch
from console.context import ConsoleContext
from indexer.backends.embeddings import default_embedder
from indexer.cli.show import writer_text
from indexer.engine import Engine
from indexer.retrieval.search_query import SearchQuery
from indexer.sync import follow
from indexer.sync.manifest import index_dir
from memvault_cli.main import main
from tests.conftest import git
from tests.helpers.cli_run import MEMVAULT, SCOPE, memvault, run_main
from vault.cli.output import human
from vault.health.check import check_vault
from vault.layout.keys import ScopeId
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

CHAT = ScopeId("b1", "group_123")
START_S = 90.0  # `memvault watch`: imports, model load, first reconcile on a busy 2-core box


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    memvault("init", str(path))
    return path


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


class Watch:
    """A real `memvault watch` on `root`, stopped at the end."""

    def __init__(self, root: Path, log: Path) -> None:
        self.log = log
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [MEMVAULT, "watch", "--vault", str(root)], stdout=subprocess.DEVNULL, stderr=err
            )
        deadline = time.monotonic() + START_S
        while "watching" not in log.read_text():
            assert self.proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture
def watching(root: Path, tmp_path: Path) -> Iterator[Watch]:
    watch = Watch(root, tmp_path / "watch.log")
    yield watch
    watch.stop()


def found(root: Path, embedder, query: str, mode: str) -> list[str]:
    """Episode ids a fresh reader of the index finds now (as the next `search` would)."""
    with Engine.open(root, writer=False, embedder=embedder) as engine:
        return [
            r.doc.episode_id for r in engine.search(SearchQuery(query, CHAT, top_k=50, mode=mode))
        ]


# -- a write while `memvault watch` runs is searchable when the command returns -------------


@pytest.mark.subprocess
def test_remember_while_watch_runs_is_searchable_when_it_returns(root, watching, embedder):
    misses = []
    for n in range(20):
        word = f"zebracorn{n}x"
        ep = memvault(
            "remember", f"{word} prefers green tea", *SCOPE, env_vault=root
        ).stdout.strip()
        # Looked up at once, both indexes: no sleep between the return and the search.
        text, vector = found(root, embedder, word, "text"), found(root, embedder, word, "vector")
        if ep not in text or ep not in vector:
            misses.append((n, ep in text, ep in vector))
    assert misses == []
    gone = memvault("forget", ep, *SCOPE, env_vault=root).stdout
    assert "forgotten" in gone and ep not in found(root, embedder, "zebracorn19x", "text")
    assert watching.proc.poll() is None  # the watcher kept the index all along


HOLD = """
import sys, time
from pathlib import Path
from indexer.backends.locks import acquire_writer_lock
lock = acquire_writer_lock(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(120)
"""


@pytest.mark.subprocess
def test_a_writer_that_never_indexes_makes_remember_exit_1_naming_it(root, monkeypatch, capsys):
    """A hung index writer (lock held, nothing indexed): remember saves, waits its bound,
    then says the memory is not searchable yet and who the writer is (exit 1)."""
    index_dir(root).mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(index_dir(root))], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(follow, "TIMEOUT_S", 0.5)
        started = time.monotonic()
        code = main(["remember", "kept even so", *SCOPE, "--vault", str(root)])
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert code == 1 and 0.5 <= waited < 10, (code, waited, err)
    assert "has not indexed it after 0.5 s" in err and f"pid {holder.pid}" in err
    assert Vault(root).list_episodes(CHAT).total == 1  # saved, and committed
    assert git(root, "status", "--porcelain") == ""


# -- demo --vault ---------------------------------------------------------------------------


def test_demo_writes_where_vault_says_never_into_memvault_vault(tmp_path, root):
    target = tmp_path / "my-demo"
    out = json.loads(
        memvault(
            "demo", "--vault", str(target), "--no-watch", "--json", env_vault=root, cwd=tmp_path
        ).stdout
    )
    assert Path(out["vault"]) == target.resolve() and (target / "bots").is_dir()
    assert not (tmp_path / "demo-vault").exists()
    # $MEMVAULT_VAULT is the person's real vault: untouched.
    assert list((root / "bots").rglob("*")) == []
    helptext = memvault("demo", "--help").stdout
    assert "--vault" in helptext and "--path" not in helptext


# -- import: a wrong file is exit 2 with what to fix, naming the file -----------------------


def test_import_of_an_object_without_episodes_is_exit_2_and_writes_nothing(root, tmp_path):
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"foo": 1}', encoding="utf-8")
    head = git(root, "rev-parse", "HEAD")
    err = memvault("import", str(wrong), *SCOPE, env_vault=root, code=2).stderr
    assert str(wrong) in err and "`episodes`" in err and "memvault export" in err
    assert len(err.strip().splitlines()) == 1
    assert git(root, "rev-parse", "HEAD") == head and list((root / "bots").rglob("*")) == []


@pytest.mark.parametrize("kind", ["missing", "binary", "folder"])
def test_import_of_a_missing_binary_or_folder_path_names_it(root, tmp_path, kind):
    path = tmp_path / f"{kind}.json"
    if kind == "binary":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    elif kind == "folder":
        path.mkdir()
    err = memvault("import", str(path), *SCOPE, env_vault=root, code=2).stderr
    assert str(path) in err and "Errno" not in err and "codec" not in err
    assert len(err.strip().splitlines()) == 1
    assert {"missing": "does not exist", "binary": "not UTF-8", "folder": "is a folder"}[
        kind
    ] in err


@settings(max_examples=25)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12).filter(lambda k: k not in ("episodes", "profiles")),
        st.none() | st.integers() | st.text(max_size=8) | st.lists(st.integers(), max_size=3),
        max_size=4,
    )
)
def test_no_json_object_without_episodes_or_profiles_imports_as_zero(tmp_path_factory, payload):
    base = tmp_path_factory.mktemp("imp")
    vault, source = base / "v", base / "in.json"
    vault.mkdir()  # an empty vault: a wrong file must leave it empty
    source.write_text(json.dumps(payload), encoding="utf-8")
    code = main(["import", str(source), *SCOPE, "--vault", str(vault), "--no-git"])
    assert code == 2 and list(vault.glob("bots/**/*")) == []


# -- show and status read as text, not Python --------------------------------------------

REPR = re.compile(r"\{'|\['|': |\bTrue\b|\bFalse\b|\bNone\b")


def test_show_prints_fields_as_words_not_python_reprs(root):
    ep = memvault(
        "remember", "Alice flies to Beijing", *SCOPE, "--speaker", "u42", "--speaker-name",
        "Alice", "--tag", "travel", "--tag", "beijing", "--key", "trip", env_vault=root,
    ).stdout.strip()  # fmt: skip
    path = next((root / "bots").rglob(f"{ep}.md"))
    text = path.read_text(encoding="utf-8")
    extra = "flight:\n  seat: 12A\n  gate: [B1, B2]\nmeal: true\n"  # a person's own fields
    path.write_text(text.replace("---\n", "---\n" + extra, 1), encoding="utf-8")
    shown = memvault("show", ep, *SCOPE, env_vault=root).stdout
    head = shown.split("\n\n")[0]
    assert REPR.search(head) is None, head
    fields = {k: v.strip() for k, v in (line.split(":", 1) for line in head.splitlines())}
    assert fields["speaker"] == "Alice (u42)" and fields["tags"] == "travel, beijing"
    assert fields["verified"] == "yes" and fields["meal"] == "true"  # as the person wrote it
    assert fields["flight"] == "seat: 12A; gate: B1, B2"


WORDS = st.text(alphabet="abcxyz 0123", min_size=1, max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | WORDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(WORDS, inner, max_size=3),
    max_leaves=8,
)


@given(VALUES)
def test_no_front_matter_value_is_shown_as_a_python_repr(value):
    shown = human(value)
    assert REPR.search(shown) is None and "{" not in shown and "[" not in shown, shown


@pytest.mark.subprocess
def test_status_names_the_writer_in_words_and_exits_1_only_on_a_problem(root, watching):
    memvault("remember", "one memory", *SCOPE, env_vault=root)
    out = memvault("status", env_vault=root).stdout
    line = next(x for x in out.splitlines() if x.startswith("index writer now:"))
    today = datetime.now(UTC)
    assert f"pid {watching.proc.pid}" in line and f"since {today:%Y-%m-%d} " in line, line
    assert "since=" not in line and re.search(r"\b\d{10}\b", line) is None, line
    bad = root / "bots/b1/sessions/group_123/episodes/bad.md"
    bad.write_text("---\ntags: [unclosed\n---\nbody\n", encoding="utf-8")
    deadline = time.monotonic() + 30
    while True:  # the watcher records the problem after its quiet period
        proc = run_main("status", "--vault", root)
        if "bad.md" in proc.stdout or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert proc.returncode == 1 and "bad.md:2:" in proc.stdout, (proc.stdout, proc.stderr)


@given(st.integers(min_value=1_000_000_000, max_value=4_000_000_000))
def test_a_writer_start_in_epoch_or_iso_reads_as_a_utc_date(epoch):
    moment = datetime.fromtimestamp(epoch, UTC)
    later = datetime.fromtimestamp(epoch + 300, UTC)
    for since in (str(epoch), moment.strftime("%Y-%m-%dT%H:%M:%SZ")):
        text = writer_text(f"pid=7 host=box cmd=memvault since={since}", now=later)
        assert text == f"memvault, pid 7 on box, since {moment:%Y-%m-%d %H:%M} UTC (5 min ago)"


def test_check_status_and_the_console_count_the_same_memory_files(root):
    vault = Vault(root)
    vault.remember(NewEpisode(CHAT, "Alice likes oat flat whites"))
    vault.remember(NewEpisode(ScopeId("b1", "person_7"), "Bob is vegetarian"))
    vault.update_profile(ProfileEdit(CHAT, "name", "set", "Project chat"))
    vault.update_profile(ProfileEdit(CHAT, "traits", "add", "night owl", speaker="u42"))
    memvault("reindex", env_vault=root)
    checked = json.loads(memvault("check", "--json", env_vault=root).stdout)
    status = json.loads(memvault("status", "--json", env_vault=root).stdout)
    assert checked["files"] == status["files"] == check_vault(root).files == 4
    assert checked["other_files"] == 2  # the two chats' audit logs: checked, not memory
    with Engine.open(root) as engine:
        ctx = ConsoleContext(vault=vault, engine=engine, isolation="session")
        cards = {c["id"]: c for c in dispatch(ctx, "/health", {})["cards"]}
    counts = [
        line["params"]["files"] for line in cards["files"]["lines"] if "files" in line["params"]
    ]
    assert counts == [4], cards["files"]
    assert "4 memory files" in memvault("status", env_vault=root).stdout
    assert (
        "checked 4 memory files and 2 other files: ok" in memvault("check", env_vault=root).stdout
    )


# -- a mistyped chat, --no-git where it means something, help, --version -----------------


def suggested(err: str) -> list[str]:
    """The chats a "did you mean `a` or `b`?" hint names, in its order."""
    hint = err.partition("did you mean ")[2]
    return re.findall(r"`([^`]+)`", hint.partition("?")[0])


@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["show", "ep_20260101_abcdef"],
        ["archive", "ep_20260101_abcdef"],
        ["export"],
        ["profile", "show"],
        ["search", "tea"],
    ],
)
def test_a_mistyped_chat_says_it_does_not_exist_and_names_the_closest(root, command):
    memvault("remember", "Alice likes tea", *SCOPE, env_vault=root)
    memvault(
        "remember", "Bob likes coffee", "--bot", "b1", "--session", "group_999", env_vault=root
    )
    head = git(root, "rev-parse", "HEAD")
    err = memvault(*command, "--bot", "b1", "--session", "group_12", env_vault=root, code=2).stderr
    assert "no chat `--bot b1 --session group_12`" in err
    assert suggested(err)[0] == "--bot b1 --session group_123"
    assert len(err.strip().splitlines()) == 1 and git(root, "rev-parse", "HEAD") == head
    # The closest comes first even where it is not the first chat in the vault's order.
    err = memvault(*command, "--bot", "b1", "--session", "group_99", env_vault=root, code=2).stderr
    assert suggested(err)[0] == "--bot b1 --session group_999", err
    no_bot = memvault(*command, "--session", "group_123", env_vault=root, code=2).stderr
    assert "`--bot b1 --session group_123`" in no_bot  # the right chat under its bot


def test_an_existing_chat_with_nothing_left_is_empty_not_missing(root):
    ep = memvault("remember", "short-lived", *SCOPE, env_vault=root).stdout.strip()
    memvault("forget", ep, *SCOPE, env_vault=root)
    assert "no memories" in memvault("list", *SCOPE, env_vault=root).stdout


READ_ONLY = ["list", "show", "check", "export", "search", "status", "watch", "reindex", "eval"]
WRITES = ["init", "remember", "forget", "archive", "restore", "profile", "import", "console"]


def test_no_git_is_offered_only_where_a_commit_is_made():
    for name in READ_ONLY:
        assert "--no-git" not in memvault(name, "--help").stdout, name
    for name in WRITES:
        assert "--no-git" in memvault(name, "--help").stdout, name
    err = memvault("list", "--no-git", *SCOPE, code=2).stderr
    assert "unrecognized arguments: --no-git" in err
    assert "--no-git" not in memvault("candidates", "list", "--help").stdout
    assert "--no-git" in memvault("candidates", "accept", "--help").stdout


def test_every_option_of_search_and_list_says_what_it_is():
    for name in ("search", "list", "remember", "show"):
        helptext = memvault(name, "--help").stdout
        for flag in ("--bot", "--session", "--isolation"):
            described = re.search(rf"^\s+{flag} \S+\s+\S", helptext, re.MULTILINE) or re.search(
                rf"^\s+{flag} \S+\n\s+\S", helptext, re.MULTILINE
            )
            assert described, (name, flag, helptext)


def test_version_comes_from_the_package_metadata():
    out = memvault("--version").stdout.strip()
    assert out == f"memvault {metadata.version('memvault')}"
