import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import git
from vault.health.check import check_vault

pytestmark = pytest.mark.slow  # 400 commits from two processes

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from vault.layout.keys import ScopeId
    from vault.format.model import Speaker
    from vault.writes.new_episode import NewEpisode
    from vault.writes.operations import Vault

    root, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    vault = Vault(root)
    scope = ScopeId("bot-1", "group_123")
    for i in range(count):
        text = f"{name} memory {i} 记忆"
        vault.remember(NewEpisode(scope, text, speaker=Speaker(name), tags=[name]))
    """
)


def test_two_processes_remembering_into_one_scope_lose_nothing(vault, scope):
    count = 200
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(vault.root), name, str(count)])
        for name in ("alpha", "beta")
    ]
    assert [p.wait(timeout=600) for p in procs] == [0, 0]

    episodes, problems = vault.load_episodes(scope)
    assert problems == []
    assert len(episodes) == 2 * count
    bodies = {s.episode.body for s in episodes}
    for name in ("alpha", "beta"):
        assert {f"{name} memory {i} 记忆" for i in range(count)} <= bodies
    assert len({s.episode.id for s in episodes}) == 2 * count

    lines = vault.layout.audit_path(scope).read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]
    assert len(entries) == 2 * count
    assert {e["target_id"] for e in entries} == {s.episode.id for s in episodes}

    assert check_vault(vault.root).ok
    # One commit per remember, and a clean tree: every file written was committed.
    log = git(vault.root, "log", "--format=%s").splitlines()
    assert sum(1 for s in log if s.startswith("remember ")) == 2 * count
    assert git(vault.root, "status", "--porcelain") == ""
