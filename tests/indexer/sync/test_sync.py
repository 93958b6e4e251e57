"""Syncer: real vault files, real TextIndex + VectorIndex, an embedder whose texts are counted
(the tiny TEST FAKE: what is counted and found here is the syncing, not the model)."""

import os
import shutil
from pathlib import Path

import pytest

from indexer.backends.backend import IndexLockedError
from indexer.backends.calibration import calibration_sentences
from indexer.backends.text_index import TextIndex
from indexer.backends.vector_index import VectorIndex
from indexer.sync.documents import read_file
from indexer.sync.manifest import Manifest, index_dir
from indexer.sync.manifest_schema import FileEntry
from indexer.sync.syncer import Syncer
from vault.layout.keys import ScopeId

SESSION = "bots/bot-1/sessions/group_123"
EPISODES = f"{SESSION}/episodes/2026/11"
KEY = ScopeId("bot-1", "group_123").index_key  # what the indexes filter on
PROFILE_KEY = ScopeId("bot-1", "group_123").profile_key
OTHER_KEY = ScopeId("bot-1", "group_999").index_key


class CountingEmbed:
    """The embed function VectorIndex calls; counts the memory texts that reach the model
    (not the model's calibration sentences, embedded once for a new index's 8-bit codes)."""

    def __init__(self, inner):
        self.inner = inner
        self.texts = 0
        self.calibration = set(calibration_sentences())

    def __call__(self, texts):
        self.texts += sum(1 for t in texts if t not in self.calibration)
        return self.inner.embed_documents(texts)


def open_syncer(root: Path, embedder, **kwargs) -> tuple[Syncer, CountingEmbed]:
    folder = index_dir(root)
    counter = CountingEmbed(embedder)
    text = TextIndex.open(folder / "text")
    vector = VectorIndex.open(
        folder / "vectors", embed=counter, dim=embedder.identity.dim, identity=embedder.identity.key
    )
    syncer = Syncer(root, text, vector, embedding_identity=embedder.identity.key, **kwargs)
    syncer.counter = counter  # test-only: lets searches leave the count alone
    return syncer, counter


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def episode(body: str, speaker: str = "Alice", extra: str = "") -> str:
    return f"---\nspeaker: {{id: u1, name: {speaker}}}\n{extra}---\n{body}\n"


def paths_found(syncer: Syncer, query: str, user_key: str = KEY, **kw) -> dict[str, set[str]]:
    """{backend: vault paths of the hits} so tests read in terms of files."""
    owner = {cid: e.path for e in syncer.manifest.entries().values() for cid in e.chunk_ids}
    counted = syncer.counter.texts  # query embeddings are not what the tests count
    found = {
        name: {
            owner.get(h.chunk_id, f"<stray {h.chunk_id}>")
            for h in b.search(query, user_key, 5, **kw)
        }
        for name, b in syncer.backends.items()
    }
    syncer.counter.texts = counted
    return found


@pytest.fixture
def root(vault) -> Path:
    return vault.root


@pytest.fixture
def synced(root, embedder):
    write(
        root,
        f"{EPISODES}/trip.md",
        episode("Alice is going to Beijing next week for a conference."),
    )
    write(root, f"{EPISODES}/cat.md", episode("用户的猫叫小白，喜欢晒太阳。", speaker="小明"))
    write(root, f"{SESSION}/episodes/plain.md", "Bob prefers green tea over coffee.\n")
    write(root, f"{SESSION}/profile.yaml", "name: Hiking club\ntraits: [outdoorsy]\n")
    write(
        root,
        f"{SESSION}/speakers/u42.yaml",
        "name: Carol\npreferences:\n  - coffee: oat flat white\n",
    )
    write(root, f"{SESSION}/audit.jsonl", '{"op": "remember"}\n')
    write(root, f"{EPISODES}/.trip.md.swp", "swap file about volcanoes")
    write(root, f"{EPISODES}/draft.md~", "backup about volcanoes")
    write(
        root,
        "bots/bot-1/sessions/group_999/episodes/other.md",
        "Another chat talks about Beijing.\n",
    )
    syncer, counter = open_syncer(root, embedder)
    yield syncer, counter
    syncer.close()


def test_reconcile_indexes_vault_and_second_run_is_free(synced, root):
    syncer, counter = synced
    report = syncer.reconcile()
    assert (report.added, report.errors) == (6, [])  # 5 in this chat, 1 in another
    assert counter.texts == 6  # every chunk embedded once (empty-free profiles: 1 chunk each)
    assert paths_found(syncer, "Beijing conference") == {
        "text": {f"{EPISODES}/trip.md"},
        "vector": {f"{EPISODES}/trip.md", f"{EPISODES}/cat.md", f"{SESSION}/episodes/plain.md"},
    }
    assert f"{EPISODES}/cat.md" in paths_found(syncer, "猫叫什么名字")["text"]
    assert paths_found(syncer, "volcanoes")["text"] == set()  # swap/backup files ignored
    profiles = paths_found(syncer, "Carol coffee", PROFILE_KEY, kinds=("profile", "speaker"))
    assert profiles["text"] == {f"{SESSION}/speakers/u42.yaml"}
    # The other chat's episode is only found in its own scope.
    other = paths_found(syncer, "Beijing", user_key=OTHER_KEY)
    assert other["text"] == {"bots/bot-1/sessions/group_999/episodes/other.md"}

    # Written under 2 s ago: too fresh to trust the stat, so re-hashed, but nothing re-sent.
    again = syncer.reconcile()
    assert (again.changed, again.hashed, again.upserted, counter.texts) == (0, 6, {}, 6)
    # Settled files are cleared by size + mtime alone: nothing read.
    for path in (root / "bots").rglob("*"):
        os.utime(path, ns=(10**18, 10**18))
    syncer.reconcile()
    settled = syncer.reconcile()
    assert (settled.changed, settled.hashed, settled.unchanged) == (0, 0, 6)


def test_same_size_rewrite_within_the_same_mtime_tick_is_not_missed(synced, root):
    syncer, _ = synced
    rel = f"{SESSION}/episodes/plain.md"
    syncer.reconcile()
    st = (root / rel).stat()
    # Same size, same mtime (as a second save in the same timestamp tick would have).
    (root / rel).write_text("Bob prefers black tea over coffee.\n", encoding="utf-8")
    os.utime(root / rel, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (root / rel).stat().st_size == st.st_size
    assert syncer.sync_paths([rel]).updated == 1
    assert paths_found(syncer, "black tea")["text"] == {rel}


def test_hand_edit_keeps_chunk_id_and_replaces_text(synced, root):
    syncer, counter = synced
    syncer.reconcile()
    rel = f"{EPISODES}/trip.md"
    before = syncer.manifest.get(rel).chunk_ids
    write(root, rel, episode("Alice cancelled the trip; she stays in Shanghai."))
    report = syncer.sync_paths([root / rel])
    assert (report.updated, report.upserted) == (1, {"text": 1, "vector": 1})
    assert syncer.manifest.get(rel).chunk_ids == before
    assert paths_found(syncer, "Beijing conference")["text"] == set()
    assert paths_found(syncer, "Shanghai")["text"] == {rel}


def test_touch_or_metadata_edit_does_not_reembed(synced, root):
    syncer, counter = synced
    syncer.reconcile()
    embedded = counter.texts
    rel = f"{EPISODES}/trip.md"
    os.utime(root / rel, ns=(1, 1))
    report = syncer.reconcile()
    assert report.touched >= 1 and (report.changed, report.upserted) == (0, {})
    # importance is not something the vector index holds: text index only.
    write(
        root,
        rel,
        episode("Alice is going to Beijing next week for a conference.", extra="importance: 5\n"),
    )
    report = syncer.sync_paths([rel])
    assert (report.updated, report.upserted) == (1, {"text": 1})
    assert counter.texts == embedded


def test_malformed_file_is_reported_and_its_old_text_removed(synced, root):
    syncer, _ = synced
    syncer.reconcile()
    rel = f"{EPISODES}/trip.md"
    broken = "---\nimportance: 9\n---\nAlice is going to Beijing next week.\n"
    write(root, rel, broken)
    report = syncer.sync_paths([rel])
    assert [(p.path, p.line) for p in report.errors] == [(rel, 2)]
    assert "importance" in report.errors[0].message
    assert paths_found(syncer, "Beijing conference") == {
        "text": set(),
        "vector": {f"{EPISODES}/cat.md", f"{SESSION}/episodes/plain.md"},
    }
    assert (root / rel).read_text(encoding="utf-8") == broken  # never modified
    assert [p.path for p in syncer.reconcile().errors] == [rel]  # still reported
    write(root, rel, episode("Alice is going to Beijing next week for a conference."))
    report = syncer.sync_paths([rel])
    assert report.errors == [] and paths_found(syncer, "Beijing")["text"] == {rel}


def test_rename_moves_chunks_without_reembedding(synced, root):
    syncer, counter = synced
    syncer.reconcile()
    embedded = counter.texts
    old, new = f"{EPISODES}/trip.md", f"{EPISODES}/2026-trip.md"
    ids = syncer.manifest.get(old).chunk_ids
    os.rename(root / old, root / new)
    report = syncer.sync_paths([old, new])
    assert (report.renamed, report.added, report.deleted, counter.texts) == (1, 0, 0, embedded)
    assert syncer.manifest.get(old) is None and syncer.manifest.get(new).chunk_ids == ids
    assert paths_found(syncer, "Beijing conference")["text"] == {new}

    # Swapping two names: still nothing to embed.
    a, b = f"{SESSION}/episodes/plain.md", new
    os.rename(root / a, root / "swap.tmp")
    os.rename(root / b, root / a)
    os.rename(root / "swap.tmp", root / b)
    report = syncer.sync_paths([a, b])
    assert (report.renamed, counter.texts) == (2, embedded)
    assert paths_found(syncer, "Beijing conference")["text"] == {a}
    assert paths_found(syncer, "green tea")["text"] == {b}

    # Into another chat: the vector index must learn the new scope (one re-embed).
    moved = "bots/bot-1/sessions/group_999/episodes/trip.md"
    os.rename(root / a, root / moved)
    report = syncer.sync_paths([a, moved])
    assert report.renamed == 1 and counter.texts == embedded + 1
    assert paths_found(syncer, "Beijing conference")["text"] == set()
    assert moved in paths_found(syncer, "Beijing conference", user_key=OTHER_KEY)["vector"]


def test_deleted_folder_is_purged(synced, root):
    syncer, _ = synced
    syncer.reconcile()
    shutil.rmtree(root / f"{SESSION}/episodes")
    report = syncer.sync_paths([root / f"{SESSION}/episodes"])
    assert report.deleted == 3
    assert paths_found(syncer, "Beijing") == {"text": set(), "vector": set()}
    assert set(syncer.manifest.entries([SESSION])) == {
        f"{SESSION}/profile.yaml",
        f"{SESSION}/speakers/u42.yaml",
    }
    # A whole session moved out of the vault: one path, everything under it goes.
    shutil.move(root / SESSION, root.parent / "elsewhere")
    assert syncer.sync_paths([SESSION]).deleted == 2
    assert syncer.manifest.entries([SESSION]) == {}
    assert set(syncer.manifest.entries()) == {"bots/bot-1/sessions/group_999/episodes/other.md"}


def test_long_episode_edit_reembeds_only_the_changed_chunk(synced, root):
    syncer, counter = synced
    rel = f"{EPISODES}/long.md"
    sections = [
        f"## Day {i}\n\n" + f"On day {i} we walked in the city number {i}. " * 12 for i in range(4)
    ]
    write(root, rel, episode("\n\n".join(sections)))
    syncer.reconcile()
    ids = syncer.manifest.get(rel).chunk_ids
    assert len(ids) >= 4
    embedded = counter.texts
    sections[2] = sections[2].replace("walked", "cycled")
    write(root, rel, episode("\n\n".join(sections)))
    report = syncer.sync_paths([rel])
    assert report.upserted["vector"] == counter.texts - embedded == 1
    assert syncer.manifest.get(rel).chunk_ids == ids
    assert paths_found(syncer, "cycled")["text"] == {rel}


def test_lost_vector_index_is_rebuilt_by_reconcile(synced, root, embedder):
    syncer, _ = synced
    syncer.reconcile()
    syncer.close()
    shutil.rmtree(index_dir(root) / "vectors")
    syncer, counter = open_syncer(root, embedder)
    try:
        report = syncer.reconcile()
        assert report.changed == 0 and report.healed == 6 and counter.texts == 6
        assert f"{EPISODES}/trip.md" in paths_found(syncer, "trip to Beijing")["vector"]
    finally:
        syncer.close()


def test_second_writer_is_refused_with_the_holder_pid(synced, root):
    syncer, _ = synced
    with pytest.raises(IndexLockedError, match=f"pid={os.getpid()}"):
        Syncer(root, *syncer.backends.values())


def test_manifest_allocator_and_prefixes(tmp_path):
    manifest = Manifest(tmp_path / "m.sqlite")
    ids = manifest.allocate(3)
    manifest.apply(put=[FileEntry("bots/a/x.md", 1, 1, "s", "episode", "k", tuple(ids))])
    manifest.apply(remove=["bots/a/x.md"])
    assert manifest.allocate(1) == [4]  # never reused
    manifest.apply(
        put=[
            FileEntry("bots/ab.md", 1, 1, "s", "episode", "k"),
            FileEntry("bots/a", 1, 1, "s", "episode", "k"),
        ]
    )
    assert set(manifest.entries(["bots/a"])) == {"bots/a"}
    manifest.close()
    assert Manifest(tmp_path / "m.sqlite").allocate(1) == [5]


def test_read_file_reports_error_line_for_bad_profile(root):
    write(root, f"{SESSION}/profile.yaml", "name: Ann\ntraits: oops\n")
    entry, docs = read_file(root, f"{SESSION}/profile.yaml")
    assert docs == [] and entry.error_line == 2 and "traits" in entry.error


def test_chunk_docs_carry_episode_and_profile_fields(root):
    rel = f"{EPISODES}/full.md"
    write(
        root,
        rel,
        "---\nid: ep_1\ncreated_at: 2026-11-30T04:20:00Z\nspeaker: {id: u42, name: Alice}\n"
        "importance: 4\ntags: [travel, beijing]\nstatus: archived\n"
        "expires_at: 2027-01-01T00:00:00Z\n---\nAlice is going to Beijing.\n",
    )
    entry, docs = read_file(root, rel)
    (doc,) = docs
    assert (entry.kind, entry.index_key, entry.error) == ("episode", KEY, None)
    assert (doc.episode_id, doc.kind, doc.index_key, doc.ordinal) == ("ep_1", "episode", KEY, 0)
    assert doc.text == "Alice: Alice is going to Beijing."  # the speaker is searchable
    assert (doc.speaker_id, doc.speaker_name, doc.tags) == ("u42", "Alice", ("travel", "beijing"))
    assert (doc.status, doc.importance) == ("archived", 4)
    assert (doc.created_at, doc.expires_at) == (1796012400, 1798761600)

    write(
        root,
        f"{SESSION}/speakers/u42.yaml",
        "name: Carol\ntraits: [night owl]\nnotes: |\n  Likes jazz.\n",
    )
    _, (speaker,) = read_file(root, f"{SESSION}/speakers/u42.yaml")
    assert (speaker.kind, speaker.index_key, speaker.episode_id) == (
        "speaker",
        PROFILE_KEY,
        f"profile:{PROFILE_KEY}:u42",
    )
    assert speaker.text == "Name: Carol\nTraits: night owl\nNotes: Likes jazz."
    write(root, f"{SESSION}/profile.yaml", "# nothing yet\n")
    assert read_file(root, f"{SESSION}/profile.yaml")[1] == []  # an empty profile says nothing

    # Shared (isolation bot) episodes belong to the bot's key.
    _, (shared,) = read_file(
        root, write(root, "bots/bot-1/episodes/x.md", "Shared.\n").relative_to(root).as_posix()
    )
    assert shared.index_key == ScopeId("bot-1", "x", "bot").index_key
