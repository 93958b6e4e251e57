"""Which files of the vault the indexes hold, with their stat: nothing is read or parsed.

Apart from indexer.sync.documents (which parses them) so that a scan loads no parser: a
search from a cold shell scans the vault to learn whether it must catch up
(indexer.cli.catch_up.behind) and usually finds nothing to parse (issue 23 item 4).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from indexer.sync.plan import DiskFile
from vault.layout.layout import MEMORY_KINDS, FileRole, classify, is_ignored
from vault.layout.links import first_link

INDEXED_KINDS: frozenset[str] = MEMORY_KINDS


def role_of(root: Path, rel: str, memo: dict[str, str | None] | None = None) -> FileRole | None:
    """The file's role if it is something the indexes hold, else None."""
    role = classify(root, rel, memo)
    return role if role.kind in INDEXED_KINDS else None


def scan(root: Path, path: Path, links: list[str] | None = None) -> Iterator[tuple[str, DiskFile]]:
    """Indexable files at or under `path`, with their stat (nothing is read).

    Symbolic links are never followed (vault.layout.links), at any depth: a path under one yields
    nothing (so what it held leaves the index) and the link goes to `links`.
    """
    rel = path.relative_to(root).as_posix()
    link = first_link(root, rel) if rel != "." else None
    if link is not None:
        if links is not None:
            links.append(link)
        return
    if path.is_dir():
        yield from scan_tree(root, path, links)
        return
    if role_of(root, rel) is None:
        return
    try:
        st = path.lstat()
    except OSError:
        return  # gone already: the plan sees it as deleted
    if stat.S_ISREG(st.st_mode):
        yield rel, DiskFile(st.st_size, st.st_mtime_ns)


def scan_tree(
    root: Path, folder: Path, links: list[str] | None = None
) -> Iterator[tuple[str, DiskFile]]:
    """`scan` of a folder: one scandir per folder, one stat per file, folder ids decoded once."""
    prefix = folder.relative_to(root).as_posix()
    prefix = "" if prefix == "." else prefix
    found: list[tuple[str, DiskFile]] = []
    link = first_link(root, prefix) if prefix else None
    if link is not None:
        if links is not None:
            links.append(link)
        return iter(found)
    _scan_dir(root, str(folder), prefix, {}, found, [] if links is None else links)
    return iter(found)


def _scan_dir(
    root: Path,
    folder: str,
    prefix: str,
    memo: dict[str, str | None],
    found: list[tuple[str, DiskFile]],
    links: list[str],
) -> None:
    try:
        with os.scandir(folder) as it:
            children = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    episodes = False
    for child in children:
        if is_ignored(child.name):
            continue
        rel = f"{prefix}/{child.name}" if prefix else child.name
        try:
            is_link = child.is_symlink()
            is_dir = not is_link and child.is_dir(follow_symlinks=False)
        except OSError:
            is_link = is_dir = False
        if is_link:
            links.append(rel)  # never followed, file or folder, inside or out
            continue
        if is_dir:
            _scan_dir(root, child.path, rel, memo, found, links)
            continue
        # Every .md file of a folder that holds one episode is an episode too (classify
        # reads no more of the name, and is_ignored cleared it above): one classify per
        # folder, not per file (10,000 of them on a search's scan).
        markdown = child.name.endswith(".md")
        if not (markdown and episodes):
            role = role_of(root, rel, memo)
            if role is None:
                continue
            episodes = episodes or (markdown and role.kind == "episode")
        try:
            st = child.stat(follow_symlinks=False)
        except OSError:
            continue  # gone already: the plan sees it as deleted
        if stat.S_ISREG(st.st_mode):
            found.append((rel, DiskFile(st.st_size, st.st_mtime_ns)))
