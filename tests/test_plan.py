"""plan_changes: pure planning from stats and hashes (table tests + properties)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.plan import DiskFile, Known, Plan, Rename, plan_changes


def disk(size, mtime, sha=None):
    return DiskFile(size, mtime, sha)


def known(size, mtime, sha):
    return Known(size, mtime, sha)


def full(files_on_disk, manifest):
    """Run both steps as a caller would: hash what the planner asks for, plan again."""
    first = plan_changes(files_on_disk, manifest)
    assert first.complete or all(files_on_disk[p].sha is None for p in first.needs_hash)
    return plan_changes(files_on_disk, manifest)


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


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(PATHS, st.tuples(st.integers(0, 2), SHAS)),
    st.dictionaries(PATHS, st.tuples(st.integers(0, 2), SHAS)),
)
def test_property_plan_accounts_for_every_path(before, after):
    manifest = {p: Known(1, m, sha) for p, (m, sha) in before.items()}
    on_disk = {p: DiskFile(1, m, sha) for p, (m, sha) in after.items()}
    plan = plan_changes(on_disk, manifest)
    assert plan.complete
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
