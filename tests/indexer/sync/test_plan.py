"""plan_changes: pure planning from stats and hashes (table tests + properties)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.sync.documents import UNTRUSTED_MTIME
from indexer.sync.plan import DiskFile, Known, Plan, Rename, plan_changes


def disk(size, mtime, sha=None):
    return DiskFile(size, mtime, sha)


def known(size, mtime, sha):
    return Known(size, mtime, sha)


def full(files_on_disk, manifest):
    """Run both steps as the sync does: stat every file (no hash), hash exactly the files the
    planner asks for, plan again. `files_on_disk` holds each file's content hash when the
    case needs one; the first step never sees it."""
    stats = {p: DiskFile(f.size, f.mtime_ns) for p, f in files_on_disk.items()}
    first = plan_changes(stats, manifest)
    # Exactly the files whose stat is not the manifest's are read: new or changed, no other.
    assert first.needs_hash == tuple(sorted(p for p in stats if not _same_stat(p, stats, manifest)))
    if first.complete:
        return first
    assert not (first.deletes or first.renames or first.adds or first.updates or first.touched)
    hashed = stats | {p: files_on_disk[p] for p in first.needs_hash}
    assert all(hashed[p].sha is not None for p in first.needs_hash), "case lacks a hash"
    second = plan_changes(hashed, manifest)
    assert second.complete
    return second


def _same_stat(path, stats, manifest):
    known, now = manifest.get(path), stats[path]
    return known is not None and (known.size, known.mtime_ns) == (now.size, now.mtime_ns)


A, B, C = "bots/_nobot/episodes/a.md", "bots/_nobot/episodes/b.md", "bots/_nobot/episodes/c.md"
DIR = "bots/_nobot/sessions/s1/episodes"

CASES = {
    "new": (
        {A: disk(10, 1, "sa")},
        {},
        Plan(adds=(A,)),
    ),
    "unchanged (fast path, never hashed)": (
        {A: disk(10, 1)},
        {A: known(10, 1, "sa")},
        Plan(unchanged=(A,)),
    ),
    "changed content": (
        {A: disk(11, 2, "sa2")},
        {A: known(10, 1, "sa")},
        Plan(updates=(A,)),
    ),
    "touched but same content": (
        {A: disk(10, 2, "sa")},
        {A: known(10, 1, "sa")},
        Plan(touched=(A,)),
    ),
    "size and mtime moved, content the same (hashed, not reindexed)": (
        {A: disk(12, 2, "sa")},
        {A: known(10, 1, "sa")},
        Plan(touched=(A,)),
    ),
    "same size and mtime, new content: the stat is trusted, never read": (
        {A: disk(10, 1, "sa2")},
        {A: known(10, 1, "sa")},
        Plan(unchanged=(A,)),
    ),
    "same size, new content, stat recorded as racy: hashed, reindexed": (
        {A: disk(10, 1, "sa2")},
        {A: known(10, UNTRUSTED_MTIME, "sa")},
        Plan(updates=(A,)),
    ),
    "same size, same content, stat recorded as racy: hashed, stat stored": (
        {A: disk(10, 1, "sa")},
        {A: known(10, UNTRUSTED_MTIME, "sa")},
        Plan(touched=(A,)),
    ),
    "deleted": (
        {},
        {A: known(10, 1, "sa")},
        Plan(deletes=(A,)),
    ),
    "renamed": (
        {B: disk(10, 1, "sa")},
        {A: known(10, 1, "sa")},
        Plan(renames=(Rename(A, B, "sa"),)),
    ),
    "renamed and edited": (
        {B: disk(12, 3, "sb")},
        {A: known(10, 1, "sa")},
        Plan(deletes=(A,), adds=(B,)),
    ),
    "swapped names": (
        {A: disk(20, 5, "sb"), B: disk(10, 6, "sa")},
        {A: known(10, 1, "sa"), B: known(20, 2, "sb")},
        Plan(renames=(Rename(B, A, "sb"), Rename(A, B, "sa"))),
    ),
    "moved over an existing file": (
        {B: disk(10, 1, "sa")},
        {A: known(10, 1, "sa"), B: known(5, 1, "sb")},
        Plan(deletes=(B,), renames=(Rename(A, B, "sa"),)),
    ),
    "copied then original edited": (
        {A: disk(12, 3, "sa2"), B: disk(10, 1, "sa")},
        {A: known(10, 1, "sa")},
        Plan(renames=(Rename(A, B, "sa"),), updates=(A,)),
    ),
    "copied (original kept)": (
        {A: disk(10, 1), B: disk(10, 4, "sa")},
        {A: known(10, 1, "sa")},
        Plan(adds=(B,), unchanged=(A,)),
    ),
    "rename chain a->b->c": (
        {B: disk(10, 1, "sa"), C: disk(20, 2, "sb")},
        {A: known(10, 1, "sa"), B: known(20, 2, "sb")},
        Plan(renames=(Rename(A, B, "sa"), Rename(B, C, "sb"))),
    ),
    "folder deleted": (
        {A: disk(1, 1)},
        {
            A: known(1, 1, "x"),
            f"{DIR}/2026/11/e1.md": known(1, 1, "e1"),
            f"{DIR}/2026/11/e2.md": known(1, 1, "e2"),
        },
        Plan(deletes=(f"{DIR}/2026/11/e1.md", f"{DIR}/2026/11/e2.md"), unchanged=(A,)),
    ),
    "folder renamed": (
        {"bots/x/new/1.md": disk(1, 1, "e1"), "bots/x/new/2.md": disk(1, 1, "e2")},
        {"bots/x/old/1.md": known(1, 1, "e1"), "bots/x/old/2.md": known(1, 1, "e2")},
        Plan(
            renames=(
                Rename("bots/x/old/1.md", "bots/x/new/1.md", "e1"),
                Rename("bots/x/old/2.md", "bots/x/new/2.md", "e2"),
            )
        ),
    ),
    "two deleted duplicates, one survives renamed": (
        {C: disk(1, 1, "dup")},
        {A: known(1, 1, "dup"), B: known(1, 1, "dup")},
        Plan(deletes=(B,), renames=(Rename(A, C, "dup"),)),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_plan_table(name):
    files_on_disk, manifest, expected = CASES[name]
    assert full(files_on_disk, manifest) == expected


def test_needs_hash_then_complete():
    manifest = {A: known(10, 1, "sa"), B: known(5, 1, "sb")}
    on_disk = {A: disk(10, 1), B: disk(5, 9), C: disk(3, 3)}
    first = plan_changes(on_disk, manifest)
    assert first.needs_hash == (B, C)  # A is cleared by size+mtime without reading it
    assert not first.complete and not first.deletes and not first.adds
    on_disk |= {B: disk(5, 9, "sb"), C: disk(3, 3, "sc")}
    second = plan_changes(on_disk, manifest)
    assert second == Plan(adds=(C,), touched=(B,), unchanged=(A,))
    assert not second.is_noop and plan_changes({A: disk(10, 1)}, {A: manifest[A]}).is_noop


SHAS = st.sampled_from(["s1", "s2", "s3", "s4"])
PATHS = st.sampled_from([f"p{i}.md" for i in range(6)])


STATS = st.tuples(st.integers(1, 2), st.integers(0, 2))  # (size, mtime): often the same


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(PATHS, st.tuples(STATS, SHAS)),
    st.dictionaries(PATHS, st.tuples(STATS, SHAS)),
)
def test_property_plan_accounts_for_every_path(before, after):
    manifest = {p: Known(*stat, sha) for p, (stat, sha) in before.items()}
    on_disk = {p: DiskFile(*stat, sha) for p, (stat, sha) in after.items()}
    same_stat = {p for p in on_disk if _same_stat(p, on_disk, manifest)}
    # A file whose stat is the manifest's holds the manifest's content: the sync records a
    # racy mtime as UNTRUSTED_MTIME, so a same-stat rewrite cannot follow a sync.
    on_disk |= {p: DiskFile(*after[p][0], manifest[p].sha) for p in same_stat}
    plan = full(on_disk, manifest)
    assert plan.complete
    # The fast path: a file with its recorded stat is never read and stays as it is; one
    # whose stat moved but whose content did not only gets its new stat stored.
    assert set(plan.unchanged) == same_stat
    assert set(plan.touched) == {
        p for p in on_disk.keys() - same_stat if p in manifest and on_disk[p].sha == manifest[p].sha
    }
    news = {r.new for r in plan.renames}
    olds = {r.old for r in plan.renames}
    # Every path on disk ends up handled exactly once.
    handled = [*plan.adds, *plan.updates, *plan.touched, *plan.unchanged, *news]
    assert sorted(handled) == sorted(on_disk)
    # Every manifest entry whose content is gone from its path is deleted or moved, once.
    dropped = [*plan.deletes, *olds]
    assert len(dropped) == len(set(dropped))
    for path in manifest:
        gone = path not in on_disk or (on_disk[path].sha != manifest[path].sha and path in news)
        if gone:
            assert path in dropped
    # A rename moves content as it was.
    for r in plan.renames:
        assert manifest[r.old].sha == on_disk[r.new].sha == r.sha
    assert set(plan.adds).isdisjoint(manifest)
    assert set(plan.updates) <= set(manifest)
