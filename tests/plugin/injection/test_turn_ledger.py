"""The turn ledger (memvault_plugin/turn_ledger.py) on its own: what one injector turn leaves
for the runner's `retrieve` in the same turn, for how long, and for whom."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memvault_plugin import turn_ledger as tl

from vault.layout.keys import ScopeId


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def entry(query_id=1, query="when is my flight", placed=("ep_a",), recalled=("ep_a", "ep_b")):
    return tl.InjectorTurn(
        query_id=query_id,
        session_name="group_A",
        query=tl.normalise(query),
        kb_ids=frozenset({"kb-1"}),
        recalled_ids=tuple(recalled),
        placed_ids=tuple(placed),
    )


KEY = tl.ledger_key(ScopeId("bot-1", "group_A"), "u1")


def test_an_entry_lives_for_the_ttl_only():
    clock = Clock()
    ledger = tl.TurnLedger(ttl=120, clock=clock)
    ledger.record(KEY, entry())
    clock.now += 119.9
    assert ledger.lookup(KEY) == entry()
    clock.now += 0.2
    assert ledger.lookup(KEY) is None
    assert len(ledger) == 0  # an expired entry is dropped, not kept


def test_the_ledger_is_bounded_least_recently_recorded_first():
    ledger = tl.TurnLedger(capacity=3, clock=Clock())
    keys = [tl.ledger_key(ScopeId("bot-1", f"group_{i}"), "u1") for i in range(5)]
    for i, key in enumerate(keys):
        ledger.record(key, entry(query_id=i))
    assert len(ledger) == 3
    assert [ledger.lookup(k) is not None for k in keys] == [False, False, True, True, True]


def test_clear_and_forget_session_void_a_turn():
    ledger = tl.TurnLedger(clock=Clock())
    other = tl.ledger_key(ScopeId("bot-1", "group_A"), "u2")
    ledger.record(KEY, entry())
    ledger.record(other, entry(query_id=2))
    ledger.clear(KEY)
    assert ledger.lookup(KEY) is None and ledger.lookup(other) is not None
    assert ledger.forget_session("group_A") == 1
    assert ledger.lookup(other) is None


def test_note_served_only_touches_the_turn_it_belongs_to():
    ledger = tl.TurnLedger(clock=Clock())
    ledger.record(KEY, entry(query_id=5))
    ledger.note_served(KEY, 4, ["ep_old"])  # a late call of an older turn
    assert ledger.lookup(KEY).served_ids == ()
    ledger.note_served(KEY, 5, ["ep_c", "ep_c", "ep_d"])
    assert ledger.lookup(KEY).served_ids == ("ep_c", "ep_d")


def test_plan_same_question_searches_nothing_and_withholds_what_was_recalled():
    plan = tl.plan_retrieve(entry(), "  when is   my flight\n", "kb-1")
    assert plan.search is False
    assert plan.withheld == ("ep_a", "ep_b") and plan.exclude == {"ep_a", "ep_b"}


def test_plan_other_question_or_other_kb_searches_minus_what_was_placed():
    for query, kb in (("something else", "kb-1"), ("when is my flight", "kb-other")):
        plan = tl.plan_retrieve(entry(), query, kb)
        assert plan.search is True and plan.exclude == {"ep_a"} and plan.withheld == ()


def test_plan_without_an_entry_is_todays_retrieve():
    assert tl.plan_retrieve(None, "when is my flight", "kb-1") == tl.RetrievePlan(
        True, frozenset(), ()
    )


ids = st.lists(st.sampled_from(["ep_a", "ep_b", "ep_c", "ep_d"]), unique=True, max_size=4)


@given(placed=ids, extra=ids, served=ids, query=st.text(max_size=30), same=st.booleans())
def test_a_plan_never_lets_a_placed_or_served_id_through(placed, extra, served, query, same):
    turn = tl.InjectorTurn(
        query_id=1,
        session_name="s",
        query=tl.normalise(query),
        kb_ids=frozenset({"kb"}),
        recalled_ids=tuple(dict.fromkeys([*placed, *extra])),
        placed_ids=tuple(placed),
        served_ids=tuple(served),
    )
    plan = tl.plan_retrieve(turn, query if same else query + " other", "kb")
    assert set(placed) <= plan.exclude
    if plan.search:
        assert set(served) <= plan.exclude
    else:  # nothing is served without a search; what was recalled is reported as withheld
        assert set(plan.withheld) == set(turn.recalled_ids)


# Ids built from characters that make LangBot's joined keys collide (':' '_' '/' '%').
part = st.text(alphabet="ab:_/%~ 1", min_size=1, max_size=6)


@settings(max_examples=300)
@given(
    one=st.tuples(part, part, part),
    two=st.tuples(part, part, part),
    isolation=st.sampled_from(["session", "bot"]),
)
def test_the_ledger_key_is_injective(one, two, isolation):
    """Two different (bot, chat, sender) never share a ledger entry, in either isolation
    (with "bot", every chat of a bot has the same index_key: the chat must still count)."""
    (b1, s1, u1), (b2, s2, u2) = one, two
    k1 = tl.ledger_key(ScopeId(b1, s1, isolation), u1)
    k2 = tl.ledger_key(ScopeId(b2, s2, isolation), u2)
    assert (k1 == k2) == ((b1, s1, u1.strip()) == (b2, s2, u2.strip()))


def test_colliding_session_keys_get_two_entries():
    a, b = ScopeId("a:b", "group_1"), ScopeId("a", "b:group_1")
    assert a.session_key == b.session_key  # what LangBot displays: the same
    ledger = tl.TurnLedger(clock=Clock())
    ledger.record(tl.ledger_key(a, "u1"), entry())
    assert ledger.lookup(tl.ledger_key(b, "u1")) is None


def test_parallel_records_and_lookups_stay_consistent():
    ledger = tl.TurnLedger(capacity=64, clock=Clock())
    keys = [tl.ledger_key(ScopeId("bot", f"group_{i}"), "u") for i in range(200)]

    def work(offset: int) -> None:
        for i, key in enumerate(keys):
            ledger.record(key, entry(query_id=i + offset))
            ledger.lookup(keys[(i * 7) % len(keys)])
            ledger.note_served(key, i + offset, ["ep_x"])

    with ThreadPoolExecutor(4) as pool:
        for future in [pool.submit(work, n * 1000) for n in range(4)]:
            future.result()  # re-raises anything a thread hit
    assert len(ledger) == 64
    survivors = [ledger.lookup(k) for k in keys[-64:]]
    assert all(e is not None and e.served_ids == ("ep_x",) for e in survivors)


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError, match="capacity"):
        tl.TurnLedger(capacity=0)
