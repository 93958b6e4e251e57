"""The `memvault` command as a person uses it, run in-process (tests/helpers/cli_run.py);
tests/integration proves the installed console script starts."""

import json
from pathlib import Path

import pytest

from tests.conftest import git
from tests.helpers.cli_run import SCOPE, Ran, memvault
from tests.helpers.paths import REPO

# DESIGN.md 7: the item shape of `search --json` and `list --json`.
ITEM_KEYS = {
    "id",
    "score",
    "content",
    "created_at",
    "speaker",
    "tags",
    "importance",
    "status",
    "path",
}


def run(*args: str, vault: Path | None = None, code: int = 0, stdin: str | None = None) -> Ran:
    """Kept for the tests of other directories that import it (console, indexer): the shared
    in-process runner under its old name; new tests call tests.helpers.cli_run.memvault."""
    return memvault(*args, env_vault=vault, code=code, input=stdin)


def run_json(*args: str, vault: Path):
    return json.loads(memvault(*args, "--json", env_vault=vault).stdout)


@pytest.fixture
def cli_vault(tmp_path):
    root = tmp_path / "memory"
    memvault("init", str(root))
    return root


def test_init_creates_a_git_vault_with_readme_and_gitignore(cli_vault):
    assert (cli_vault / ".gitignore").read_text().count(".memvault/") == 1
    readme = (cli_vault / "README.md").read_text(encoding="utf-8")
    assert "episodes/" in readme and "记忆" in readme
    assert "init" in git(cli_vault, "log", "--format=%s")
    assert git(cli_vault, "status", "--porcelain") == ""


def test_remember_list_show_archive_restore_forget(cli_vault):
    ep_id = memvault(
        "remember",
        "Alice 下周去北京",
        *SCOPE,
        "--speaker",
        "u42",
        "--speaker-name",
        "Alice",
        "--tag",
        "travel",
        "--importance",
        "4",
        env_vault=cli_vault,
    ).stdout.strip()
    assert ep_id.startswith("ep_")
    listing = run_json("list", *SCOPE, vault=cli_vault)
    assert listing["total"] == 1 and listing["page"] == 1
    item = listing["items"][0]
    assert set(item) >= ITEM_KEYS
    assert (item["content"], item["speaker"]["name"], item["importance"]) == (
        "Alice 下周去北京",
        "Alice",
        4,
    )
    shown = run_json("show", ep_id, *SCOPE, vault=cli_vault)
    assert shown["source"] == "user" and shown["tags"] == ["travel"]
    assert "Alice 下周去北京" in memvault("show", ep_id, *SCOPE, env_vault=cli_vault).stdout
    memvault("archive", ep_id, *SCOPE, env_vault=cli_vault)
    assert run_json("list", *SCOPE, vault=cli_vault)["total"] == 0
    assert run_json("list", *SCOPE, "--status", "archived", vault=cli_vault)["total"] == 1
    memvault("restore", ep_id, *SCOPE, env_vault=cli_vault)
    memvault("forget", ep_id, *SCOPE, env_vault=cli_vault)
    assert run_json("list", *SCOPE, "--status", "all", vault=cli_vault)["total"] == 0
    subjects = git(cli_vault, "log", "--format=%s").splitlines()
    assert [s.split()[0] for s in subjects[:4]] == ["forget", "restore", "archive", "remember"]


def test_profile_set_add_remove_with_slots_and_history(cli_vault):
    memvault("profile", "set", "name", "Alice", *SCOPE, "--speaker", "u42", env_vault=cli_vault)
    memvault(
        "profile",
        "add",
        "preferences",
        "oat flat white",
        "--fact-key",
        "coffee",
        *SCOPE,
        "--speaker",
        "u42",
        env_vault=cli_vault,
    )
    memvault(
        "profile",
        "add",
        "preferences",
        "coffee: black",
        *SCOPE,
        "--speaker",
        "u42",
        env_vault=cli_vault,
    )
    memvault(
        "profile", "add", "traits", "night owl", *SCOPE, "--speaker", "u42", env_vault=cli_vault
    )
    prof = run_json("profile", "show", *SCOPE, "--speaker", "u42", vault=cli_vault)
    assert prof["name"] == "Alice"
    assert prof["preferences"] == ["coffee: black"]
    assert prof["history"][0]["value"] == "oat flat white"
    assert prof["traits"] == ["night owl"]
    memvault(
        "profile", "remove", "traits", "night owl", *SCOPE, "--speaker", "u42", env_vault=cli_vault
    )
    assert run_json("profile", "show", *SCOPE, "--speaker", "u42", vault=cli_vault)["traits"] == []
    err = memvault(
        "profile",
        "remove",
        "traits",
        "nothing",
        *SCOPE,
        "--speaker",
        "u42",
        env_vault=cli_vault,
        code=2,
    ).stderr
    assert "no item" in err


def test_check_reports_line_exits_1_and_leaves_file_identical(cli_vault):
    memvault("remember", "fine memory", *SCOPE, env_vault=cli_vault)
    folder = cli_vault / "bots/b1/sessions/group_123/episodes"
    bad = folder / "hand.md"
    data = "---\r\ntags: [a\r\nstatus: active\r\n---\r\n手写\r\n".encode()
    bad.write_bytes(data)
    proc = memvault("check", env_vault=cli_vault, code=1)
    assert "bots/b1/sessions/group_123/episodes/hand.md:2:" in proc.stdout
    report = json.loads(memvault("check", "--json", env_vault=cli_vault, code=1).stdout)
    # Two memory files (the count `status` shows too) and the chat's audit log.
    assert report["ok"] is False and (report["files"], report["other_files"]) == (2, 1)
    assert report["problems"][0]["path"].endswith("hand.md")
    assert bad.read_bytes() == data
    bad.unlink()
    assert json.loads(memvault("check", "--json", env_vault=cli_vault).stdout)["ok"] is True


def test_export_then_import_into_another_chat(cli_vault, tmp_path):
    memvault("remember", "first", *SCOPE, "--tag", "a", env_vault=cli_vault)
    memvault("remember", "second 第二", *SCOPE, "--importance", "5", env_vault=cli_vault)
    memvault("profile", "set", "name", "Book club", *SCOPE, env_vault=cli_vault)
    out = tmp_path / "chat.json"
    out.write_text(memvault("export", *SCOPE, env_vault=cli_vault).stdout, encoding="utf-8")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(e["content"] for e in data["episodes"]) == ["first", "second 第二"]
    assert data["profiles"][0]["profile"]["name"] == "Book club"
    other = ["--bot", "b1", "--session", "group_456"]
    result = run_json("import", str(out), *other, vault=cli_vault)
    assert result["imported"] == 2
    listing = run_json("list", *other, vault=cli_vault)
    assert sorted(i["content"] for i in listing["items"]) == ["first", "second 第二"]
    assert run_json("profile", "show", *other, vault=cli_vault)["name"] == "Book club"
    again = run_json("import", str(out), *other, vault=cli_vault)
    assert (again["imported"], again["skipped"]) == (0, 2)


def test_import_longtermmemory_l2_shape_from_stdin(cli_vault):
    payload = {
        "episodes": [
            {
                "content": "用户喜欢猫",
                "tags": ["pet"],
                "importance": 4,
                "timestamp": "2026-03-14T00:00:00Z",
                "sender_id": "u1",
                "sender_name": "Li",
            },
            {"content": "plain list item", "importance": "9"},
        ]
    }
    result = (
        run_json("import", "-", *SCOPE, vault=cli_vault)
        if False
        else json.loads(
            memvault(
                "import", "-", *SCOPE, "--json", env_vault=cli_vault, input=json.dumps(payload)
            ).stdout
        )
    )
    assert result["imported"] == 2
    items = run_json("list", *SCOPE, vault=cli_vault)["items"]
    cat = next(i for i in items if i["content"] == "用户喜欢猫")
    assert cat["created_at"] == "2026-03-14T00:00:00Z" and cat["speaker"]["id"] == "u1"
    assert next(i for i in items if i["content"] == "plain list item")["importance"] == 5


@pytest.mark.parametrize(
    "args,needle",
    [
        (["list", "--session", "group_1", "--page", "0"], "page"),
        (["show", "../../etc/passwd", "--session", "group_1"], "not valid"),
        (["remember", "x", "--session", "..", "--bot", "b1"], "not allowed"),
        (["remember", "x", "--session", "group_1", "--importance", "7"], "importance"),
        (["import", "missing.json", "--session", "group_1"], "missing.json"),
    ],
)
def test_bad_input_exits_2_with_one_line_reason(cli_vault, args, needle):
    proc = memvault(*args, env_vault=cli_vault, code=2)
    assert needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_missing_vault_and_source_package_are_refused(tmp_path):
    proc = memvault("list", "--session", "group_1", env_vault=tmp_path / "nope", code=2)
    assert "memvault init" in proc.stderr
    source_pkg = REPO / "vault"
    proc = memvault("list", "--session", "group_1", env_vault=source_pkg, code=2)
    assert "source package" in proc.stderr
