"""Links are never followed where the system has no O_NOFOLLOW, O_DIRECTORY nor dir_fd
(Windows): vault.files.regular and vault.layout.links then check with lstat() before and after the
open.

That path runs here on Linux with `vault.files.regular.NOFOLLOW` set to 0 (what it is on Windows),
against real links, FIFOs and folders, and must decide exactly as the O_NOFOLLOW path does.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.files import regular
from vault.layout import links
from vault.layout.links import VaultLinkError, read_vault_file

FOLDER_KINDS = ("dir", "link_dir")
LEAF_KINDS = ("file", "link_file", "link_inside", "dangling", "fifo", "dir", "missing")


@pytest.fixture
def windows_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regular, "NOFOLLOW", 0)
    assert not links._opens_at()


def build(base: Path, folders: list[str], leaf: str) -> tuple[Path, str]:
    """A vault under `base` whose path `rel` goes through `folders` to a `leaf`; outside it
    a folder and a file with the same names, full of secrets."""
    root, outside = base / "vault", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("outside secret", encoding="utf-8")
    (root / "inside.md").write_text("inside, but a link to it is refused", encoding="utf-8")
    current, parts, followed = root, [], False
    for n, kind in enumerate(folders):
        name = f"d{n}"
        parts.append(name)
        target = outside / "/".join(parts)
        target.mkdir(parents=True, exist_ok=True)
        (target / "leaf.md").write_text("outside secret", encoding="utf-8")
        if not followed and kind == "link_dir":
            (current / name).symlink_to(target, target_is_directory=True)
            followed = True
        elif not followed:
            (current / name).mkdir()
        current = target if followed else current / name  # what a follower sees next
    leaf_path = current / "leaf.md"
    if followed:
        pass  # behind a folder link the leaf is an outside secret already
    elif leaf == "file":
        leaf_path.write_text("the memory", encoding="utf-8")
    elif leaf == "link_file":
        leaf_path.symlink_to(outside / "secret.md")
    elif leaf == "link_inside":
        leaf_path.symlink_to(root / "inside.md")
    elif leaf == "dangling":
        leaf_path.symlink_to(outside / "nothing.md")
    elif leaf == "fifo":
        os.mkfifo(leaf_path)
    elif leaf == "dir":
        leaf_path.mkdir()
    return root, "/".join([*parts, "leaf.md"])


def outcome(read: Callable[[], tuple[bytes, os.stat_result]]) -> tuple[str, object]:
    try:
        data, st_ = read()
    except VaultLinkError:
        return ("link", None)
    except OSError:  # unreadable (missing, a folder, a FIFO): the errno may differ
        return ("oserror", None)
    return ("read", (data, st_.st_ino))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(FOLDER_KINDS), max_size=3), st.sampled_from(LEAF_KINDS))
def test_the_windows_path_decides_as_o_nofollow_does(folders: list[str], leaf: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, rel = build(Path(tmp), folders, leaf)
        fast = outcome(lambda: read_vault_file(root, rel))
        saved = regular.NOFOLLOW
        regular.NOFOLLOW = 0
        try:
            assert not links._opens_at()
            portable = outcome(lambda: read_vault_file(root, rel))
        finally:
            regular.NOFOLLOW = saved
    assert portable == fast, (folders, leaf)
    through_link = "link_dir" in folders or leaf.startswith("link") or leaf == "dangling"
    assert (portable[0] == "link") == through_link
    if portable[0] == "read":
        assert portable[1][0] == b"the memory"  # type: ignore[index]


@pytest.mark.parametrize("swap_back", [False, True])
def test_a_folder_swapped_for_a_link_during_the_open_is_refused(
    tmp_path: Path, windows_path: None, monkeypatch: pytest.MonkeyPatch, swap_back: bool
) -> None:
    """The race the checks close: the folder is checked, then becomes a link just before the
    open (and, with swap_back, is put back right after it, before the second check)."""
    root, rel = build(tmp_path, ["dir"], "file")
    folder, aside = root / "d0", root / "d0.real"
    real_open = regular.open_regular

    def open_while_swapped(path: Path | str, *args: int) -> int:
        folder.rename(aside)
        folder.symlink_to(tmp_path / "outside" / "d0", target_is_directory=True)
        try:
            return real_open(path, *args)
        finally:
            if swap_back:
                folder.unlink()
                aside.rename(folder)

    monkeypatch.setattr(regular, "open_regular", open_while_swapped)
    with pytest.raises(VaultLinkError, match="symbolic link"):
        read_vault_file(root, rel)


def test_open_regular_without_nofollow_refuses_links_and_creates_nothing(
    tmp_path: Path, windows_path: None
) -> None:
    target = tmp_path / "target"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(target)
    with pytest.raises(OSError) as refused:
        regular.open_regular(dangling, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert refused.value.errno == errno.ELOOP and not target.exists()
    target.write_text("precious", encoding="utf-8")
    with pytest.raises(OSError) as refused:
        regular.open_regular(dangling, os.O_WRONLY | os.O_TRUNC)
    assert refused.value.errno == errno.ELOOP
    assert target.read_text(encoding="utf-8") == "precious"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        regular.open_regular(tmp_path / "fifo")
    plain = tmp_path / "plain"
    fd = regular.open_regular(plain, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    os.write(fd, b"a\nb\n")
    os.close(fd)
    assert regular.read_regular(plain) == b"a\nb\n"
