"""The Hypothesis profile the suite runs under: `ci` when $CI is set (CI services, .ci/run),
reproducible and bounded; `dev` otherwise. Checked in fresh interpreters, because the profile
is chosen once, when tests/conftest.py is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

PROBE = r"""
import json
import tests.conftest  # chooses the profile, as pytest does before any test module
from hypothesis import given, settings, strategies as st

seen = []

@given(st.lists(st.integers(), max_size=5))
def draw(values):
    seen.append(values)

draw()
now = settings.default
print(json.dumps({
    "profile": settings.get_current_profile_name(),
    "derandomize": now.derandomize,
    "database": now.database is None,
    "deadline": now.deadline is None,
    "max_examples": now.max_examples,
    "seen": seen,
}))
"""


def probe(tmp_path: Path, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        # cwd outside the repo: a `dev` run must not leave an example database in it
        cwd=tmp_path,
        env=clean | {"PYTHONPATH": str(REPO)} | env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_ci_runs_the_same_bounded_examples_every_time(tmp_path, value):
    first, second = probe(tmp_path, CI=value), probe(tmp_path, CI=value)
    assert first["profile"] == "ci"
    assert first["derandomize"] and first["database"] and first["deadline"]
    assert first["max_examples"] == 100
    assert first["seen"] and first["seen"] == second["seen"]  # a red run can be replayed


@pytest.mark.parametrize("env", [{}, {"CI": ""}, {"CI": "false"}, {"CI": "0"}])
def test_without_ci_the_dev_profile_explores(tmp_path, env):
    got = probe(tmp_path, **env)
    assert got["profile"] == "dev"
    assert not got["derandomize"] and not got["deadline"]


def test_the_profile_can_be_chosen_by_hand(tmp_path):
    assert probe(tmp_path, CI="true", HYPOTHESIS_PROFILE="dev")["profile"] == "dev"
    assert probe(tmp_path, HYPOTHESIS_PROFILE="ci")["profile"] == "ci"


@pytest.mark.parametrize(("given", "seen"), [(None, "true"), ("false", "false")])
def test_ci_run_sets_ci_unless_the_ci_service_did(tmp_path, given, seen):
    """.ci/run, run on a copy whose README's test command prints what it was given."""
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_bytes((REPO / ".ci" / "run").read_bytes())
    readme = '```sh\necho install\necho "CI=[$CI]"\n```\n'
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")],
        env=env if given is None else env | {"CI": given},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == f"CI=[{seen}]"
