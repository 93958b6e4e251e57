import os
import random
import threading
import time

import pytest

from vault.files.safewrite import (
    ConflictError,
    atomic_write,
    content_hash,
    create_new,
    rewrite,
)


def upper_first_line(data: bytes) -> bytes:
    head, _, rest = data.partition(b"\n")
    return head.upper() + b"\n" + rest


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "a" / "file.md"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.md"]


def test_create_new_never_replaces(tmp_path):
    target = tmp_path / "x.md"
    assert create_new(target, b"first")
    assert not create_new(target, b"second")
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["x.md"]


def test_save_landing_before_the_swap_is_reapplied_not_lost(tmp_path):
    target = tmp_path / "ep.md"
    target.write_bytes(b"status: active\nbody\n")
    saves = iter([b"status: active\nbody\nperson's new line\n"])

    def person_saves() -> None:
        data = next(saves, None)
        if data is not None:
            atomic_write(target, data)  # an editor's atomic save

    result = rewrite(target, upper_first_line, before_replace=person_saves)
    assert result == b"STATUS: ACTIVE\nbody\nperson's new line\n"
    assert target.read_bytes() == result


def test_expected_hash_refuses_to_write_over_an_unseen_change(tmp_path):
    target = tmp_path / "ep.md"
    target.write_bytes(b"v1\n")
    seen = content_hash(b"v1\n")
    target.write_bytes(b"v2 by a person\n")
    with pytest.raises(ConflictError, match="reload"):
        rewrite(target, upper_first_line, expected_hash=seen)
    assert target.read_bytes() == b"v2 by a person\n"


def test_file_that_never_settles_fails_clearly(tmp_path):
    target = tmp_path / "ep.md"
    target.write_bytes(b"a\n")
    counter = iter(range(100))

    def keep_saving() -> None:
        target.write_bytes(f"save {next(counter)}\n".encode())

    with pytest.raises(ConflictError, match="kept changing"):
        rewrite(target, upper_first_line, before_replace=keep_saving)
    assert target.read_bytes().startswith(b"save ")


@pytest.mark.parametrize("style", ["atomic", "in_place"])
def test_person_saving_while_memvault_rewrites_never_loses_a_save(tmp_path, style):
    """A person keeps adding lines (read, append, save) while MemVault keeps rewriting line 1.

    Every line the person ever saved must survive: MemVault may only write over versions it
    has read. Real threads, real files, no hooks.
    """
    target = tmp_path / "ep.md"
    target.write_bytes(b"header 0\n")
    stop = threading.Event()
    saved: list[str] = []

    def person() -> None:
        n = 0
        while not stop.is_set() and n < 300:
            n += 1
            line = f"person {n}"
            try:
                data = target.read_bytes()
            except FileNotFoundError:
                continue  # MemVault's swap has the path for a moment: the editor retries
            data += f"{line}\n".encode()
            if style == "atomic":
                atomic_write(target, data)
            else:
                with open(target, "wb") as handle:
                    handle.write(data)
            saved.append(line)
            time.sleep(random.uniform(0, 0.002))

    thread = threading.Thread(target=person)
    thread.start()
    rewrites = 0
    try:
        for i in range(150):
            try:
                rewrite(target, lambda d, i=i: b"header %d\n" % i + d.partition(b"\n")[2])
                rewrites += 1
            except (ConflictError, FileNotFoundError):
                pass
    finally:
        stop.set()
        thread.join()
    final = target.read_text()
    if style == "atomic":
        missing = [line for line in saved if line + "\n" not in final]
        assert missing == []
    assert rewrites > 50
    assert not [p for p in os.listdir(tmp_path) if p != "ep.md"]
