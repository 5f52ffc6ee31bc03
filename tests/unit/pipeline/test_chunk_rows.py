"""The (chunk, payload) Arrow rows a batch travels in, built from buffers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from connect_lite.pipeline import transfer
from connect_lite.pipeline.record_errors import JobFailedError
from connect_lite.pipeline.transfer import _ARROW_SCHEMA, _row, _rows, lane_layout, split


@pytest.mark.parametrize(
    ("chunk", "payload"),
    [(0, b""), (3, b"abc"), (2**40, bytes(range(256)) * 1000), (-1, b"\x00")],
)
def test_a_row_holds_its_chunk_and_payload(chunk: int, payload: bytes) -> None:
    row = _row(chunk, payload)
    row.validate(full=True)
    assert row.schema == _ARROW_SCHEMA
    assert row.num_rows == 1
    assert row.to_pydict() == {"chunk": [chunk], "payload": [payload]}


def test_rows_make_one_table_with_one_batch_per_chunk() -> None:
    payloads = [b"first", b"", b"third"]
    table = pa.Table.from_batches([_row(i, p) for i, p in enumerate(payloads)], _ARROW_SCHEMA)
    table.validate(full=True)
    assert len(table.to_batches()) == 3
    assert table.column("payload").to_pylist() == payloads
    assert table.column("chunk").to_pylist() == [0, 1, 2]


def test_a_payload_over_arrows_binary_limit_is_refused() -> None:
    class Huge(bytes):
        def __len__(self) -> int:
            return 2**31

    with pytest.raises(JobFailedError, match="over Arrow's 2,147,483,647-byte limit"):
        _row(0, Huge(b"x"))


def test_building_rows_does_not_import_pandas() -> None:
    """pa.array over Python objects imports pandas on its first call (0.2 s in every new
    Spark Python worker); a Python worker that only moves chunks must not pay for it."""
    code = textwrap.dedent(
        """
        import sys
        from connect_lite.pipeline.transfer import _row
        _row(1, b"payload").to_pydict()
        print("pandas" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"


def test_split_covers_every_record_once() -> None:
    assert split(5, 2) == [(0, 3), (3, 5)]
    assert split(1, 4) == [(0, 1)]


def test_rows_of_several_chunks_share_one_batch_in_order() -> None:
    rows = _rows([4, 1, 7], [b"four", b"", b"seven"])
    rows.validate(full=True)
    assert rows.to_pydict() == {"chunk": [4, 1, 7], "payload": [b"four", b"", b"seven"]}


def test_a_lane_layout_keeps_each_lane_in_one_partition_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transfer, "MAX_CHUNK_RECORDS", 3)
    lanes = ["a", "b", "a", "c", "a", "b", "a", "a", None]
    layout = lane_layout(lanes, 2)
    assert layout.order is not None and sorted(layout.order) == list(range(len(lanes)))
    assert layout.partitions is not None and len(layout.partitions) == len(layout.bounds)
    seen: dict[str | None, list[int]] = {}
    partition_of: dict[str | None, set[int]] = {}
    for (start, end), partition in zip(layout.bounds, layout.partitions, strict=True):
        assert end - start <= 3
        for position in layout.order[start:end]:
            seen.setdefault(lanes[position], []).append(position)
            partition_of.setdefault(lanes[position], set()).add(partition)
    assert seen == {"a": [0, 2, 4, 6, 7], "b": [1, 5], "c": [3], None: [8]}  # in batch order
    assert all(len(p) == 1 for p in partition_of.values())  # each lane in one partition
    assert partition_of["a"] != partition_of["b"]  # the largest lane has a partition to itself


def test_one_lane_is_one_partition_and_keeps_the_batch_order() -> None:
    layout = lane_layout(["f"] * 5, 4)
    assert layout.order is None and layout.bounds == [(0, 5)] and layout.partitions == [0]
