"""`!memory health`: is the vault usable, the index sound, the embedder alive, and does
recall stay inside its scope? The checks live in indexer.health and indexer.probe (the
console's Health panel runs the same ones); this adds the pipeline's opt-in state.
"""

from __future__ import annotations

from memvault_plugin import live_settings

from indexer.health import (
    Check,
    embedding_check,
    files_check,
    git_check,
    index_checks,
    writable_check,
)
from indexer.probe import isolation_probe
from vault.git import syncstate
from vault.health.check import check_vault

from .memory_actions import Call
from .memory_views import health_line, health_result


def health(call: Call) -> str:
    memory = call.memory
    checks: list[Check] = [
        writable_check(memory.settings.vault_path),
        live_settings.check(memory.record, memory.settings),
        _pipeline(call),
    ]
    if memory.location is not None and memory.location.verdict is not None:
        # Only a runtime-installed plugin is judged (vault_location): outside it, no line.
        checks.append(("WARN" if memory.location.problem else "OK", memory.location.text()))
    checks += [("WARN", w) for w in memory.warnings]
    vault, engine = memory.vault, memory.engine
    if vault is None or engine is None:
        checks.append(("ERROR", "memory is unavailable: fix the warnings above and restart"))
    else:
        checks.append(files_check(check_vault(vault.root)))
        checks.append(git_check(vault, memory.settings.git_autocommit))
        if (synced := syncstate.check(vault.root)) is not None:  # replicas (sync_remote)
            checks.append(synced)
        checks += index_checks(engine)
        checks.append(embedding_check(engine))
        checks += isolation_probe(vault.root, engine, call.scope)
    lines = ["[Memory Health]"] + [health_line(status, detail) for status, detail in checks]
    lines.append(health_result([status for status, _ in checks]))
    return "\n".join(lines)


def _pipeline(call: Call) -> Check:
    """Memory is on in a pipeline when a MemVault knowledge base is attached to it."""
    if call.kb_state == "active":
        return ("OK", f"MemVault knowledge base {call.kb_id} is attached to this pipeline")
    if call.kb_state == "inactive":
        return (
            "WARN",
            f"MemVault knowledge base {call.kb_id} is not attached to this pipeline: attach it "
            "to turn memory on here",
        )
    if call.kb_state == "none":
        return (
            "WARN",
            "no MemVault knowledge base yet: create one with the MemVault engine and attach it "
            "to the pipeline to turn memory on",
        )
    return ("WARN", "could not ask LangBot which knowledge bases this pipeline uses")
