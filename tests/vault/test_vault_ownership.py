"""Issue 20 item 5: every vault MemVault finds by itself (./memory, a ./memory link and the
folder it leads to, a vault above the current folder, a hand-made ./memory, ./memory for
`init`) passes one ownership rule, judged by the effective uid: another user's folder, or
one every user may write, is refused with whose it is and `--vault PATH` to use it on
purpose. `--vault` and $MEMVAULT_VAULT are used as given; a link there to another user's
folder is warned about. As root, files planted with os.chown play the other user."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli_run import run_main
from vault.layout.discovery import ForeignVaultError, locate
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.new_episode import NewEpisode
from vault.writes.operations import Vault

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="planting another uid needs root"
)

OTHER = 12345
SCOPE = ["--bot", "b1", "--session", "group_123"]
PLANTED = "a memory the other user planted"


def vault_of(folder: Path, uid: int) -> Path:
    """A real vault with one memory, every file of it owned by `uid`."""
    init_vault(folder, git=False)
    Vault(folder, git=False).remember(NewEpisode(ScopeId("b1", "group_123"), PLANTED))
    for path in (folder, *folder.rglob("*")):
        os.chown(path, uid, uid, follow_symlinks=False)
    return folder


def run(*argv: str) -> tuple[int, str, str]:
    ran = run_main(*argv, env_vault=os.environ.get("MEMVAULT_VAULT"))  # as monkeypatch set it
    return ran.returncode, ran.stdout, ran.stderr


@pytest.fixture
def shared(tmp_path: Path, monkeypatch) -> Path:
    """A shared folder everybody works in, and nobody's MEMVAULT_VAULT."""
    here = tmp_path / "shared"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.delenv("MEMVAULT_VAULT", raising=False)
    return here


def files_of(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}


def assert_refused(capsys, shared: Path, planted: Path, *, clause: str) -> None:
    """`list` and `remember` both refuse (exit 2), say whose and what to do, write nothing."""
    before = files_of(planted)
    for argv in (["list", *SCOPE], ["remember", "my secret plans", *SCOPE]):
        code, out, err = run(*argv)
        assert code == 2, (argv, out, err)
        assert PLANTED not in out
        assert clause in err, err
        assert "so MemVault does not use it" in err
        assert f"Pass --vault {shared / 'memory'}" in err or "Pass --vault /" in err
    assert files_of(planted) == before
    assert not any("my secret plans" in p.read_text() for p in files_of(planted))


def test_a_memory_folder_of_another_user_is_refused(capsys, shared: Path):
    planted = vault_of(shared / "memory", OTHER)
    assert_refused(capsys, shared, planted, clause=f"belongs to uid {OTHER}, not to you")
    # Used on purpose, it is used.
    code, out, _ = run("list", *SCOPE, "--vault", str(planted))
    assert code == 0 and PLANTED in out


def test_a_memory_link_planted_by_another_user_is_refused(capsys, shared: Path, tmp_path: Path):
    mine = vault_of(tmp_path / "mine", 0)
    (shared / "memory").symlink_to(mine, target_is_directory=True)
    os.chown(shared / "memory", OTHER, OTHER, follow_symlinks=False)
    assert_refused(capsys, shared, mine, clause=f"is a link that belongs to uid {OTHER}")


def test_a_memory_link_to_another_users_folder_is_refused(capsys, shared: Path, tmp_path: Path):
    theirs = vault_of(tmp_path / "theirs", OTHER)
    (shared / "memory").symlink_to(theirs, target_is_directory=True)
    assert_refused(
        capsys, shared, theirs, clause=f"leads to {theirs}, which belongs to uid {OTHER}"
    )


def test_a_vault_of_another_user_above_the_current_folder_is_refused(
    capsys, shared: Path, monkeypatch
):
    planted = vault_of(shared / "vault", OTHER)
    inside = planted / "bots" / "b1"
    monkeypatch.chdir(inside)
    code, out, err = run("list", *SCOPE)
    assert code == 2 and PLANTED not in out
    assert f"{planted} (found above the current folder) belongs to uid {OTHER}" in err
    assert f"--vault {planted}" in err
    code, out, _ = run("list", *SCOPE, "--vault", str(planted))
    assert code == 0 and PLANTED in out


def test_a_hand_made_memory_folder_of_another_user_is_refused(capsys, shared: Path):
    """No vault marks yet (the default `./memory` as a plain folder): the same rule."""
    planted = shared / "memory"
    planted.mkdir()
    os.chown(planted, OTHER, OTHER)
    code, _, err = run("remember", "my secret plans", *SCOPE)
    assert code == 2 and f"belongs to uid {OTHER}" in err
    assert list(planted.iterdir()) == []


def test_init_never_makes_its_vault_inside_another_users_memory(capsys, shared: Path):
    planted = shared / "memory"
    planted.mkdir()
    os.chown(planted, OTHER, OTHER)
    code, _, err = run("init")
    assert code == 2 and f"belongs to uid {OTHER}" in err
    assert list(planted.iterdir()) == []


def test_a_vault_every_user_can_write_is_refused(capsys, shared: Path):
    planted = vault_of(shared / "memory", 0)
    planted.chmod(0o777)
    assert_refused(capsys, shared, planted, clause="can be written by every user")
    planted.chmod(0o755)
    (planted / "bots").chmod(0o777)  # anyone could add a chat whose memories get injected
    assert_refused(capsys, shared, planted, clause="holds bots/ that every user")
    planted.chmod(0o775)  # group-write is a deliberate share: allowed
    (planted / "bots").chmod(0o775)
    code, out, _ = run("list", *SCOPE)
    assert code == 0 and PLANTED in out


def test_a_vault_whose_memory_folder_another_user_owns_is_refused(capsys, shared: Path):
    planted = vault_of(shared / "memory", 0)
    os.chown(planted / "bots", OTHER, OTHER)
    assert_refused(capsys, shared, planted, clause=f"holds bots/ that belongs to uid {OTHER}")


def test_ownership_is_judged_by_the_effective_uid(shared: Path, monkeypatch):
    """Root's vault is root's own; the same folder is another user's vault for uid 12345,
    and uid 12345's vault is theirs."""
    vault_of(shared / "memory", 0)
    assert locate(None)[0] == shared / "memory"
    monkeypatch.setattr(os, "geteuid", lambda: OTHER)
    with pytest.raises(ForeignVaultError, match="belongs to user root \\(uid 0\\)"):
        locate(None)
    for path in (shared / "memory", *(shared / "memory").rglob("*")):
        os.chown(path, OTHER, OTHER)
    assert locate(None)[0] == shared / "memory"


@pytest.mark.parametrize("how", ["--vault", "MEMVAULT_VAULT"])
def test_an_explicit_link_to_another_users_vault_is_used_with_a_warning(
    shared: Path, tmp_path: Path, monkeypatch, how: str
):
    theirs = vault_of(tmp_path / "theirs", OTHER)
    link = shared / "link"
    link.symlink_to(theirs, target_is_directory=True)
    if how == "--vault":
        code, out, err = run("list", *SCOPE, "--vault", str(link))
    else:
        monkeypatch.setenv("MEMVAULT_VAULT", str(link))
        code, out, err = run("list", *SCOPE)
    assert code == 0 and PLANTED in out
    said = f"is a link to {theirs}, which belongs to uid {OTHER}: used as you asked"
    # The run's own stderr: the plain warning line a person reads (PlainFormatter).
    assert [w for w in err.splitlines() if w.startswith("warning: ") and said in w], err
    # The folder itself, named explicitly, is the user's own choice: no warning.
    monkeypatch.delenv("MEMVAULT_VAULT", raising=False)
    code, out, err = run("list", *SCOPE, "--vault", str(theirs))
    assert code == 0 and PLANTED in out and err == ""


def test_my_own_vault_and_a_link_to_it_are_used(capsys, shared: Path, tmp_path: Path):
    mine = vault_of(tmp_path / "mine", 0)
    (shared / "memory").symlink_to(mine, target_is_directory=True)
    code, out, err = run("list", *SCOPE)
    assert code == 0 and PLANTED in out, err


def test_a_memory_link_loop_says_no_vault(capsys, shared: Path):
    (shared / "memory").symlink_to(shared / "memory")
    code, _, err = run("list", *SCOPE)
    assert code == 2 and "no vault at" in err and "Traceback" not in err


def test_the_demos_default_folder_of_another_user_is_refused(capsys, shared: Path):
    planted = shared / "demo-vault"
    planted.mkdir()
    os.chown(planted, OTHER, OTHER)
    code, _, err = run("demo", "--no-watch")
    assert (
        code == 2 and f"demo-vault (the demo's default ./demo-vault) belongs to uid {OTHER}" in err
    )
    assert list(planted.iterdir()) == []
