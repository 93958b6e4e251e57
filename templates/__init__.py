"""Default files MemVault writes (profiles, episodes, the vault README) and prompt wording."""

from __future__ import annotations

from importlib import resources


def read_template(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
