"""LineBuffer: splitting a byte stream into lines and tracking byte positions."""

from __future__ import annotations

from types import ModuleType

import pytest


def feed_all(
    lines_module: ModuleType, chunks: list[bytes], start: int = 0
) -> tuple[list[str], list[int], int]:
    buffer = lines_module.LineBuffer(start)
    for chunk in chunks:
        buffer.feed(chunk)
    lines, ends = buffer.take(10_000)
    return lines, ends, buffer.pending_bytes


@pytest.mark.parametrize(
    "chunks",
    [
        [b"a\nb\r\nc\rd\n"],
        [b"a\nb\r", b"\nc\r", b"d\n"],  # "\r\n" split across reads
        [b"a", b"\n", b"b\r\nc", b"\rd", b"\n"],
        [bytes([byte]) for byte in b"a\nb\r\nc\rd\n"],
    ],
)
def test_line_endings_as_kafka_splits_them(lines_module: ModuleType, chunks: list[bytes]) -> None:
    assert feed_all(lines_module, chunks) == (["a", "b", "c", "d"], [2, 5, 7, 9], 0)


def test_incomplete_tail_is_held_back(lines_module: ModuleType) -> None:
    assert feed_all(lines_module, [b"x\nyz"]) == (["x"], [2], 2)
    assert feed_all(lines_module, [b"x\ny\r"]) == (["x"], [2], 2)  # "\r" may precede "\n"
    assert feed_all(lines_module, [b"x\r\r"]) == (["x"], [2], 1)


def test_positions_count_bytes_from_the_start_position(lines_module: ModuleType) -> None:
    lines, ends, _ = feed_all(lines_module, ["é\n\n€\n".encode()], start=100)
    assert lines == ["é", "", "€"]
    assert ends == [103, 104, 108]


def test_invalid_utf8_is_replaced(lines_module: ModuleType) -> None:
    assert feed_all(lines_module, [b"ok\xff\n"])[0] == ["ok\ufffd"]


def test_take_consumes_in_order(lines_module: ModuleType) -> None:
    buffer = lines_module.LineBuffer()
    buffer.feed(b"".join(b"%d\n" % i for i in range(10)))
    assert buffer.ready == 10
    first, _ = buffer.take(4)
    buffer.feed(b"10\n")
    second, ends = buffer.take(100)
    assert first + second == [str(i) for i in range(11)]
    assert ends[-1] == buffer.position == 10 * 2 + 3
    assert buffer.ready == 0 and buffer.take(5) == ([], [])
