"""`memvault init`: turn a folder into a vault (layout, .gitignore, README, git repository)."""

from __future__ import annotations

import logging
from pathlib import Path

from templates import read_template
from vault.files.safewrite import atomic_write
from vault.git import gitlog
from vault.layout.layout import STATE_DIR

log = logging.getLogger(__name__)


def init_vault(root: Path, *, git: bool = True) -> list[str]:
    """Create what is missing and commit it; never overwrites a file already there.

    Returns the vault-relative paths it created.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "bots").mkdir(exist_ok=True)
    (root / STATE_DIR).mkdir(exist_ok=True)
    created: list[str] = []
    for name, template in ((".gitignore", "vault_gitignore"), ("README.md", "vault_README.md")):
        target = root / name
        if not target.exists():
            atomic_write(target, read_template(template).encode("utf-8"))
            created.append(name)
        elif name == ".gitignore" and STATE_DIR not in target.read_text(encoding="utf-8"):
            log.warning("init=gitignore_incomplete path=%s hint='add .memvault/ to it'", target)
    if git:
        gitlog.init_repo(root)
        if created:
            gitlog.commit_paths(root, created, "init memvault vault")
    return created
