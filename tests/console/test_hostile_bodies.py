"""A hostile request body gets a 400 JSON answer naming the problem, through the real
standalone server (raw sockets) and through the dispatcher LangBot's page host calls with a
body it parsed itself (issue 20, items 7 and 8). Before, a body nested 1,000+ deep closed the
connection with no answer and printed a traceback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from console.api import dispatch
from console.context import ConsoleContext
from console.errors import ApiError
from console.server import ConsoleServer
from tests.console.test_server_limits import TOKEN, exchange, post, status_and_error
from vault.layout.keys import ScopeId
from vault.writes.create import init_vault
from vault.writes.operations import Vault

CHAT = ScopeId("b1", "g1")
SCOPE = {"bot": "b1", "session": "g1"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Vault]]:
    root = tmp_path_factory.mktemp("hostile") / "vault"
    init_vault(root, git=False)
    vault = Vault(root, git=False)
    ctx = ConsoleContext(vault=vault, engine=None, isolation="session")
    srv = ConsoleServer(ctx, port=0, token=TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.port, vault
    srv.shutdown()


def ask(port: int, body: bytes) -> tuple[int, dict[str, Any]]:
    return status_and_error(exchange(port, post(f"Content-Length: {len(body)}\r\n", body)))


def import_body(payload_text: str) -> bytes:
    return (
        (
            '{"endpoint": "/import", "body": {"scope": ' + json.dumps(SCOPE) + ', "payload": '
        ).encode()
        + payload_text.encode()
        + b"}}"
    )


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE = {
    "a body 5,000 deep": (("[" * 5000 + "]" * 5000).encode(), "nests deeper than 40 levels"),
    "a payload 1,000 deep": (
        import_body('{"episodes": [{"content": "x", "extra": {"a": ' + nested(1000) + "}}]}"),
        "nests deeper than 40 levels",
    ),
    "a payload 200 deep": (
        import_body('{"episodes": [{"content": "x", "extra": {"a": ' + nested(200) + "}}]}"),
        "$.body.payload.episodes[0].extra",
    ),
    "a 5,000-digit number": (
        import_body('{"episodes": [{"content": "x", "importance": ' + "7" * 5000 + "}]}"),
        "a number of 5000 digits",
    ),
    "Infinity": (
        import_body('{"episodes": [{"content": "x", "confidence": Infinity}]}'),
        "Infinity",
    ),
    "a lone surrogate": (import_body('{"episodes": [{"content": "\\udc00"}]}'), "\\udc00"),
    "content 5": (import_body('{"episodes": [{"content": 5}]}'), "episode 1: content must be a"),
    "tags 3": (import_body('{"episodes": [{"content": "x", "tags": 3}]}'), "episode 1: tags must"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_the_server_answers_400_naming_the_problem(served, name):
    port, vault = served
    body, words = HOSTILE[name]
    status, answer = ask(port, body)
    assert (status, answer["code"]) == (400, "bad_request"), answer
    assert words in answer["error"], answer
    assert vault.load_episodes(CHAT)[0] == []
    meta = b'{"endpoint": "/meta", "body": {}}'
    assert ask(port, meta)[0] == 200  # and the server still serves


def deep_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({"episodes": [{"content": "x", "extra": {"a": deep_list(3000)}}]}, "nests deeper"),
        ({"episodes": [{"content": "x", "importance": float("nan")}]}, "nan, not a number"),
        ({"episodes": [{"content": "x", "extra": {1: "a"}}]}, "which is not text"),
        ({"episodes": [{"content": "x", "importance": 10**400}]}, "more than 40 digits"),
    ],
)
def test_a_body_the_page_host_parsed_is_held_to_the_same_limits(served, payload, words):
    _, vault = served
    ctx = ConsoleContext(vault=vault, engine=None, isolation="session")
    with pytest.raises(ApiError) as caught:
        dispatch(ctx, "/import", {"scope": SCOPE, "payload": payload})
    assert (caught.value.status, caught.value.code) == (400, "bad_request")
    assert words in caught.value.message
    assert vault.load_episodes(CHAT)[0] == []
