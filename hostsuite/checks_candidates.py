"""Candidate memories from a real turn (issue 13), asserted on the vault's files, its git
history and what the model received.

`candidates: true` and `candidates_model: <the suite's fake-chat model>` are set through the
host's plugin config API and MemVault is restarted to read them (as checks_scope does for
isolation). Then, in chat A, a turn with a plan: after the reply MemVault's
NormalMessageResponded handler queues the turn, and its queue asks the host's `invoke_llm`
outside the event's host-call link; the FAKE LLM answers the extraction prompt with one
episode candidate (fake_llm.script_extraction). Checked:

- the reply was in the chat before the extraction request reached the model;
- a pending candidate file in the chat's candidates/ folder, listed by `!memory candidates`;
- the next request of a related question does not carry it (pending is never recalled);
- `!memory candidate accept <id>` makes exactly one git commit (the candidate file and the
  new episode) and one `accept_candidate` audit line;
- the same question's next request carries the accepted memory exactly once.

When no candidate comes, the FAIL detail quotes MemVault's `candidates_` log lines (e.g. a
host call refused with "Plugin invocation has ended").
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from typing import TYPE_CHECKING, Any

from hostsuite.checks_chat import other, settle
from hostsuite.checks_scope import set_plugin_config
from hostsuite.fake_llm import EXTRACTION_PROMPT, extraction_data, text_of
from hostsuite.framework import phase
from hostsuite.host import Host, SuiteError, wait_for
from hostsuite.llm_requests import Request, read_requests

if TYPE_CHECKING:
    from hostsuite.framework import SuiteContext
    from vault.candidates import StoredCandidate
    from vault.writes.operations import Vault

PLAN = "I'm moving to Lisbon on 3 June"
PLAN_TAIL = "is moving to Lisbon on 3 June"  # what the fake's candidate says after the name
QUESTION = "When do I move to Lisbon?"
LISTED = re.compile(r"^\s*\[(cand_[^\]\s]+)\]", re.MULTILINE)
# A group reply starts with an @mention of the sender, then the command's text.
ACCEPTED = re.compile(r"\[Memory\] Candidate (\S+) accepted as episode (ep_[0-9a-z_]+)")
WAIT_S = 60  # extraction starts ~1.5 s after the reply; the rest is margin on 2 busy cores


def _vault(suite: SuiteContext) -> tuple[Vault, Any]:
    from vault.layout.keys import ScopeId
    from vault.writes.operations import Vault

    scope = ScopeId(suite.facts["ids"]["bot"], suite.facts["sessions"]["A"])
    return Vault(suite.vault_root, git=True), scope


def _git(suite: SuiteContext, *argv: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(suite.vault_root), *argv],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def commits(suite: SuiteContext) -> int:
    return int(_git(suite, "rev-list", "--count", "HEAD").strip())


def extraction_for(suite: SuiteContext, said: str, after: float) -> Request | None:
    """The first extraction request (MemVault's prompt) for the turn that said `said`."""
    for request in read_requests(suite.llm_log):
        system = next(
            (text_of(m.get("content")) for m in request.messages if m.get("role") == "system"),
            "",
        )
        if request.at < after or not system.startswith(EXTRACTION_PROMPT):
            continue
        if extraction_data(list(request.messages)).get("last_user_message") == said:
            return request
    return None


def plugin_log(
    suite: SuiteContext, needles: tuple[str, ...] = ("candidates_", "invocation")
) -> str:
    """MemVault's log lines about candidates (the debug copy's output), the last few."""
    path = suite.logs / "memvault.log"
    if not path.exists():
        return "(no memvault.log)"
    lines = [
        x for x in path.read_text("utf-8", "replace").splitlines() if any(n in x for n in needles)
    ]
    return " | ".join(x.strip()[:300] for x in lines[-5:]) or "(no candidates_ line)"


def pending(suite: SuiteContext) -> list[StoredCandidate]:
    from vault.candidates import load_candidates

    vault, scope = _vault(suite)
    return [
        s
        for s in load_candidates(vault, scope)[0]
        if s.candidate.status == "pending" and PLAN_TAIL in s.candidate.body
    ]


@phase("candidates from a real turn", order=70)
async def run(suite: SuiteContext, host: Host, ids: dict[str, str]) -> None:
    set_plugin_config(suite, host, {"candidates": True, "candidates_model": ids["llm"]})
    try:
        suite.restart_memvault(host)  # it reads its settings at start only
        await candidate_turn(suite, host)
    finally:
        # Off again for what follows (the installed package reads its config at start).
        set_plugin_config(suite, host, {"candidates": False})


async def candidate_turn(suite: SuiteContext, host: Host) -> None:
    chat = suite.chats["A"]
    commits_before = await asyncio.to_thread(commits, suite)
    started = time.time()
    turn = await suite.ask(chat, PLAN)
    replied = time.time()  # an upper bound: suite.ask also waited for the probe's record
    suite.seen(turn, f"A: {PLAN} (candidates on)", other("A"))
    try:
        request = await asyncio.to_thread(
            wait_for,
            "the extraction request at the fake LLM",
            lambda: extraction_for(suite, PLAN, started),
            WAIT_S,
        )
        found = await asyncio.to_thread(
            wait_for, "the pending candidate file", lambda: pending(suite), WAIT_S
        )
    except SuiteError as exc:
        suite.check(
            "a real turn with a plan produces a pending candidate file (host invoke_llm)",
            False,
            f"{exc}; MemVault's log: {plugin_log(suite)}",
        )
        return
    suite.check(
        "the candidate turn's reply was not delayed by extraction (reply before the request)",
        "FAKE-LLM-REPLY" in turn.reply and request.at > replied,
        f"reply in the chat at +{replied - started:.2f}s, extraction request at the model at "
        f"+{request.at - started:.2f}s (gap {request.at - replied:.2f}s)",
    )
    stored = found[0]
    text = stored.path.read_text("utf-8")
    rel = stored.path.relative_to(suite.vault_root).as_posix()
    head = {k: k in text for k in ("source: candidate", "status: pending", "kind: episode")}
    proposal_commits = await asyncio.to_thread(commits, suite)
    suite.check(
        "a real turn with a plan produces one pending candidate file in the chat's folder",
        len(found) == 1
        and all(head.values())
        and "/sessions/" in f"/{rel}"
        and "/candidates/" in rel
        and stored.candidate.proposed_by == suite.facts["ids"]["llm"],
        f"{rel}: {stored.candidate.body!r}; front matter {head}; proposed_by "
        f"{stored.candidate.proposed_by}; commits for the proposal "
        f"{proposal_commits - commits_before}; log: {plugin_log(suite, ('candidates_w',))}",
    )
    await review(suite, host, stored)


async def review(suite: SuiteContext, host: Host, stored: StoredCandidate) -> None:
    chat = suite.chats["A"]
    cid, body = stored.candidate.id, stored.candidate.body
    listed = await suite.ask(chat, "!memory candidates")
    suite.check(
        "`!memory candidates` lists the pending candidate",
        LISTED.findall(listed.reply) == [cid] and PLAN_TAIL in listed.reply,
        listed.reply.strip()[:300],
    )
    seen = suite.seen(await suite.ask(chat, QUESTION), f"A: {QUESTION} (pending)", other("A"))
    suite.check(
        "a pending candidate is not recalled: the next related request does not carry it",
        seen.count(body) == 0 and seen.count(cid) == 0 and not seen.count(PLAN_TAIL),
        f"candidate text x{seen.count(body)}, id x{seen.count(cid)}; ids in the request "
        f"{list(seen.ids)}",
    )
    before = await asyncio.to_thread(commits, suite)
    accepted = await suite.ask(chat, f"!memory candidate accept {cid}")
    match = ACCEPTED.search(accepted.reply)
    after = await asyncio.to_thread(commits, suite)
    if match is None or match.group(1) != cid:
        suite.check("`!memory candidate accept <id>` accepts it", False, accepted.reply[:300])
        return
    episode_id = match.group(2)
    files = _git(suite, "show", "--name-only", "--format=%s", "HEAD").split("\n")
    rel = stored.path.relative_to(suite.vault_root).as_posix()
    episode_files = [f for f in files if f.endswith(".md") and "/episodes/" in f]
    suite.check(
        "`!memory candidate accept <id>` makes exactly one git commit (candidate + episode)",
        after - before == 1 and rel in files and len(episode_files) == 1,
        f"reply {accepted.reply.strip()[:160]!r}; commits +{after - before}; HEAD "
        f"{[f for f in files if f]}",
    )
    vault, scope = _vault(suite)
    lines = _audit(vault, scope, cid)
    suite.check(
        "the accept has its audit line (accept_candidate, naming the new episode)",
        len(lines) == 1 and episode_id in lines[0].summary and lines[0].source == "user",
        f"accept_candidate lines for {cid}: {[(e.summary, e.source) for e in lines]}",
    )
    await settle(suite, host, suite.facts["sessions"]["A"], QUESTION, PLAN_TAIL)
    seen = suite.seen(await suite.ask(chat, QUESTION), f"A: {QUESTION} (accepted)", other("A"))
    suite.check(
        "the accepted candidate is recalled: the next related request has it exactly once",
        seen.times(episode_id) == 1 and seen.count(body) == 1 and seen.duplicates == 0,
        f"id {episode_id} x{seen.times(episode_id)} (block {list(seen.block_ids)}, retrieve "
        f"{list(seen.retrieved_ids)}); text x{seen.count(body)}; duplicates {seen.duplicates}",
    )


def _audit(vault: Vault, scope: Any, cid: str) -> list[Any]:
    from vault.files import audit

    entries, _ = audit.read(vault.layout.audit_path(scope))
    return [e for e in entries if e.operation == "accept_candidate" and e.target_id == cid]
