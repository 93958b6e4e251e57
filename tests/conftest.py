import subprocess
from pathlib import Path

import pytest

from vault.create import init_vault
from vault.keys import ScopeId
from vault.operations import Vault

SCOPE = ScopeId("bot-1", "group_123")


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "memory"
    init_vault(root)
    return Vault(root)


@pytest.fixture
def scope() -> ScopeId:
    return SCOPE


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout
