"""The (chunk, payload) Arrow rows a batch travels in, built from buffers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from connect_lite.pipeline.record_errors import JobFailedError
from connect_lite.pipeline.transfer import _ARROW_SCHEMA, _row, split


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
