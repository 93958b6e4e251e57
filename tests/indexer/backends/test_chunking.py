"""chunk_text: heading/paragraph-aware splitting; nothing lost, bounded size, deterministic."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.backends.chunking import chunk_text, split_pieces


def non_ws(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_short_body_is_one_chunk_as_written():
    assert chunk_text("  Alice is going to Beijing.\n\nNext week.  ") == [
        "Alice is going to Beijing.\n\nNext week."
    ]
    assert chunk_text("   \n ") == []


def test_headings_start_chunks_and_are_carried():
    body = "\n\n".join(
        [
            "Intro line.",
            "# Trip",
            "Day one. " * 60,
            "## Food",
            "Dumplings were great. " * 10,
        ]
    )
    chunks = chunk_text(body, max_chars=200)
    assert chunks[0] == "Intro line."
    assert chunks[1].startswith("# Trip\n\nDay one.")
    trip = [c for c in chunks if c.startswith("# Trip")]
    assert len(trip) > 2  # the long section was split and every part says it is "# Trip"
    food = [c for c in chunks if c.startswith("## Food")]
    assert food and all("Dumplings" in c for c in food)
    assert all(len(c) <= 200 for c in chunks)


def test_heading_inside_code_fence_is_not_a_heading():
    body = "Text before.\n\n```\n# not a heading\n```\n\n" + "More text here. " * 60
    chunks = chunk_text(body, max_chars=300)
    assert not any(c.startswith("# not a heading") for c in chunks)


def test_paragraphs_are_packed_not_split():
    paras = [f"Paragraph {i} is short." for i in range(40)]
    chunks = chunk_text("\n\n".join(paras), max_chars=120)
    for chunk in chunks:
        # each chunk holds whole paragraphs
        assert all(p.startswith("Paragraph") and p.endswith("short.") for p in chunk.split("\n\n"))
    assert len(chunks) < len(paras)


def test_chinese_sentences_split_at_sentence_ends():
    body = "我们去了长城。天气很好！你去过吗？" * 30
    chunks = chunk_text(body, max_chars=100)
    assert len(chunks) > 1
    assert all(len(c) <= 100 for c in chunks)
    assert all(c[-1] in "。！？" for c in chunks)


def test_english_sentence_split_keeps_decimals_and_urls():
    body = "Pi is 3.14 and the site is example.com today. " * 40
    chunks = chunk_text(body, max_chars=120)
    assert all("3.14" in c and "example.com" in c for c in chunks)


def test_unbroken_run_is_cut_at_the_limit():
    chunks = chunk_text("长" * 1000, max_chars=300)
    assert [len(c) for c in chunks] == [300, 300, 300, 100]


TEXT = st.text(
    alphabet=st.sampled_from(list("ab c.。！？\n\n#-`中文 xyz!?")) | st.characters(),
    max_size=3000,
)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(min_value=20, max_value=800))
def test_property_nothing_lost_bounded_deterministic(text, max_chars):
    pieces = split_pieces(text, max_chars)
    # Without the repeated headings, the chunks are exactly the text's characters in order.
    assert non_ws("".join(p.body for p in pieces)) == non_ws(text)
    chunks = chunk_text(text, max_chars)
    assert chunks == [p.text() for p in pieces]
    assert all(c.strip() for c in chunks)
    assert all(len(c) <= max_chars for c in chunks)
    assert chunk_text(text, max_chars) == chunks


WORD = st.text(alphabet="abcdefghij长城天气", min_size=1, max_size=12)
SENTENCE = st.builds(
    lambda words, end: " ".join(words) + end,
    st.lists(WORD, min_size=1, max_size=30),
    st.sampled_from([".", "!", "?", "。", "！", "？", ""]),
)
BLOCK = st.one_of(
    st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 6), WORD),
    st.builds(" ".join, st.lists(SENTENCE, min_size=1, max_size=40)),
    st.builds(lambda t: f"```\n# {t}\n```", WORD),
    st.builds(lambda n: "x" * n, st.integers(1, 2000)),
)
MARKDOWN = st.builds("\n\n".join, st.lists(BLOCK, max_size=25))


@settings(max_examples=150, deadline=None)
@given(MARKDOWN, st.integers(min_value=20, max_value=800))
def test_property_markdown_documents(text, max_chars):
    pieces = split_pieces(text, max_chars)
    assert non_ws("".join(p.body for p in pieces)) == non_ws(text)
    chunks = chunk_text(text, max_chars)
    assert all(0 < len(c) <= max_chars for c in chunks)
    assert chunk_text(text, max_chars) == chunks
    # A carried heading is always a heading line from the text.
    for piece in pieces:
        assert not piece.context or (piece.context.startswith("#") and piece.context in text)
