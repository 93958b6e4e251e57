"""Synthetic bilingual vaults of N episodes over 1,000 scopes, generated once and cached.

Episodes come from bench.sync.corpus (same sentences, same episode model); scopes are
10 bots x 100 chats with Zipf-like sizes (s=0.8), the largest being bench.inject's
scope so its injection timing runs unchanged here. No git: committing 100k+ files is
not what this suite measures.

`texts_from=M` (for 1M: `--reuse-texts 100000`) draws each episode's speaker and body from
the cached M-episode vault instead of composing new ones, with its own id, date and scope,
and seeds the embedding cache with that vault's cache: every vector is still the real model
vector of a real chunk text, but nothing needs re-embedding (~2.5 h of model time at 1M on
2 cores). Exact vector search costs the same whether or not texts repeat across scopes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.inject.__main__ import BOT, SESSION
from bench.sync.corpus import NAMES, make_episode, write_atomic
from vault.format.episodes import parse_episode, render_episode
from vault.format.model import Episode
from vault.layout.keys import ScopeId
from vault.layout.layout import STATE_DIR, Layout
from vault.writes.create import init_vault
from vault.writes.operations import Vault
from vault.writes.profile_edit import ProfileEdit

SCOPES = 1000
ZIPF_S = 0.8
DONE = "generated.json"


def cache_root() -> Path:
    base = os.environ.get("MEMVAULT_BENCH_CACHE") or Path.home() / ".cache" / "memvault"
    return Path(base) / "bench-scale"


def vault_dir(n: int) -> Path:
    return cache_root() / str(n) / "vault"


def scopes() -> list[tuple[ScopeId, float]]:
    """1,000 (scope, weight) pairs, largest first: rank r gets 1 / r**ZIPF_S."""
    out = [ScopeId(BOT, SESSION)]
    for b in range(10):
        for s in range(100):
            if len(out) == SCOPES:
                break
            kind = "group" if s % 3 else "person"
            out.append(ScopeId(f"bot-{b + 1}", f"{kind}_{1000 + s}"))
    return [(scope, 1.0 / (rank + 1) ** ZIPF_S) for rank, scope in enumerate(out)]


def _source_episodes(m: int) -> list[Episode]:
    """Every episode of the cached m-episode vault (the texts a reuse run draws from)."""
    source = vault_dir(m)
    if not (source.parent / DONE).exists():
        raise FileNotFoundError(f"{source} is not generated: run --sizes {m} first")
    files = sorted((source / "bots").rglob("episodes/**/*.md"))
    return [
        parse_episode(f.read_bytes(), rel_path=f.relative_to(source).as_posix(), mtime=0.0)
        for f in files
    ]


def _seed_cache(root: Path, m: int) -> None:
    """Copy the m vault's embedding cache (sqlite backup: consistent even if WAL is live)."""
    cache = STATE_DIR + "/cache/embeddings.sqlite"
    target = root / cache
    target.parent.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(vault_dir(m) / cache), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def generate(root: Path, n: int, seed: int = 5, texts_from: int | None = None) -> dict[str, object]:
    """Write the vault (episodes as files, profiles of the largest scope through Vault)."""
    if root.exists():
        shutil.rmtree(root)
    started = time.perf_counter()
    rng = random.Random(seed)
    init_vault(root, git=False)
    pool = _source_episodes(texts_from) if texts_from else []
    if texts_from:
        _seed_cache(root, texts_from)
    layout = Layout(root)
    pairs = scopes()
    chosen = rng.choices([s for s, _ in pairs], [w for _, w in pairs], k=n)
    counts: dict[str, int] = {}
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for scope in chosen:
        created = start + timedelta(seconds=rng.randrange(700 * 86400))
        if pool:  # same speaker + body (so the same chunk texts), new id, date and scope
            new_id = f"ep_{created:%Y%m%d}_{rng.getrandbits(32):08x}"
            episode = dataclasses.replace(rng.choice(pool), id=new_id, created_at=created)
        else:
            episode = make_episode(rng, created)
        write_atomic(layout.new_episode_path(scope, episode.id, created), render_episode(episode))
        key = f"{scope.bot}:{scope.session}"
        counts[key] = counts.get(key, 0) + 1
    vault = Vault(root, git=False)
    main = ScopeId(BOT, SESSION)
    vault.update_profile(
        ProfileEdit(main, "notes", "set", "A busy team chat about several projects.")
    )
    vault.update_profile(
        ProfileEdit(main, "preferences", "add", "answers in the language of the question")
    )
    for i, name in enumerate(NAMES, start=1):
        vault.update_profile(ProfileEdit(main, "name", "set", name, speaker=f"u{i}"))
    sizes = sorted(counts.values())
    info = {
        "episodes": n,
        "scopes": len(counts),
        "largest_scope": f"{BOT}:{SESSION}",
        "largest_scope_episodes": counts.get(f"{BOT}:{SESSION}", 0),
        "median_scope_episodes": sizes[len(sizes) // 2],
        "seed": seed,
        "texts_from": texts_from,
        "texts": f"speaker + body of the {texts_from:,}-episode vault's episodes, cache seeded"
        if texts_from
        else "composed by bench.sync.corpus",
        "generate_s": round(time.perf_counter() - started, 2),
    }
    (root.parent / DONE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def ensure(
    n: int, seed: int = 5, texts_from: int | None = None
) -> tuple[Path, dict[str, object], bool]:
    """The cached vault of n episodes (generated if missing); True if it was made now."""
    root = vault_dir(n)
    done = root.parent / DONE
    if root.exists() and done.exists():
        info = json.loads(done.read_text(encoding="utf-8"))
        if info.get("texts_from") != texts_from:
            raise ValueError(f"{root} was generated with texts_from={info.get('texts_from')}")
        return root, info, False
    root.parent.mkdir(parents=True, exist_ok=True)
    return root, generate(root, n, seed, texts_from), True
