"""docs/compatibility.md stays true to the code: every replaced Kafka key, every new worker key."""

from __future__ import annotations

from pathlib import Path

from connect_lite.config.worker import REPLACED_KAFKA_KEYS

COMPATIBILITY = (Path(__file__).resolve().parents[3] / "docs" / "compatibility.md").read_text()


def test_every_kafka_key_connect_lite_replaces_is_listed_with_its_replacement() -> None:
    table = COMPATIBILITY.split("| Kafka key | connect-lite |", 1)[1].split("\n\n", 1)[0]
    rows = {line.strip() for line in table.splitlines() if line.strip().startswith("| `")}
    for key, replaced in REPLACED_KAFKA_KEYS.items():
        row = [r for r in rows if f"`{key}`" in r.split(" | ")[0]]
        assert len(row) == 1, key
        assert replaced.replacement in row[0].split(" | ", 1)[1], key
