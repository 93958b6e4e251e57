"""`index:` in <vault>/memvault.yaml and MEMVAULT_INDEX: the forms, what is refused, what
`memvault init --index` records (tracked by git) and what `memvault status` says."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich.repo import Repo

from tests.helpers.cli_run import memvault
from vault.errors import BadRequestError
from vault.layout.index_setting import ENV, SETTINGS_NAME, parse_index, read_index, write_index


@pytest.mark.parametrize(
    ("value", "kind", "address"),
    [
        ("local", "local", ""),
        ("milvus://db.example:19530", "milvus", "http://db.example:19530"),
        ("milvus://db.example", "milvus", "http://db.example:19530"),
        ("https://in01.zillizcloud.com:443", "milvus", "https://in01.zillizcloud.com:443"),
        ("milvus+lite:///srv/idx/vault.db", "lite", "/srv/idx/vault.db"),
        (".memvault/milvus.db", "lite", "VAULT/.memvault/milvus.db"),
    ],
)
def test_the_forms(value: str, kind: str, address: str, tmp_path: Path) -> None:
    choice = parse_index(value, tmp_path)
    assert choice.kind == kind
    assert choice.address == address.replace("VAULT", str(tmp_path.resolve()))


@pytest.mark.parametrize(
    "value",
    ["postgres://x", "milvus://", "milvus://h:1/db", "milvus+lite://rel.db", "a/b.txt",
     "bad name!.db", "x" * 40 + ".db"],
)  # fmt: skip
def test_other_values_are_refused_with_the_forms(value: str, tmp_path: Path) -> None:
    with pytest.raises(BadRequestError, match="milvus://HOST"):
        parse_index(value, tmp_path)


def test_the_env_overrides_the_file_and_a_password_is_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert read_index(tmp_path).kind == "local"
    (tmp_path / SETTINGS_NAME).write_text("other: kept\nindex: milvus://a:1\n", encoding="utf-8")
    assert read_index(tmp_path).uri == "milvus://a:1"
    monkeypatch.setenv(ENV, "https://user:s3cret@b.example:443")
    choice = read_index(tmp_path)
    assert choice.source == ENV and "s3cret" not in choice.shown and "b.example" in choice.shown
    assert write_index(tmp_path, parse_index("local", tmp_path))
    text = (tmp_path / SETTINGS_NAME).read_text(encoding="utf-8")
    assert "other: kept" in text and text.count("index:") == 1


def test_init_records_the_index_in_git_and_status_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    root = tmp_path / "v"
    memvault("init", root, "--index", "milvus://db.example:19530")
    repo = Repo(str(root))
    tree = repo[repo[repo.head()].tree]
    assert SETTINGS_NAME.encode() in [e.path for e in tree.items()]  # travels with the vault
    repo.close()
    status = memvault("--vault", root, "status")
    assert "vector index: milvus://db.example:19530 (from memvault.yaml)" in status.stdout
    refused = memvault("init", tmp_path / "w", "--index", "postgres://x", code=2)
    assert "milvus://HOST" in refused.stderr and not (tmp_path / "w").exists()
