"""The JDBC demo: PostgreSQL -> Kafka -> SQLite, with Confluent's configs.

A throwaway PostgreSQL (the local installation's initdb and pg_ctl, on a free port, in a
temporary directory) holds a table of orders, with a new order every 2 s. A JDBC source copies
it into the topic ``shop-orders`` (timestamp+incrementing mode), and a JDBC sink upserts that
topic into the SQLite file ``data/demo/shop.db``, beside the file demo of ``scripts/run.sh``,
which this runs afresh (``--fresh``: the database is new each time). Ctrl-C stops the worker,
then the database. Without a local PostgreSQL it says how to get one and exits 1.

    .venv/bin/python scripts/demo/jdbc.py      # after scripts/setup.sh (scripts/run.sh runs it)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from connect_lite.testing.postgres import PostgresServer  # noqa: E402

DEMO = REPO / "data" / "demo"
JSON = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "true",
}


def connectors(url: str) -> list[Path]:
    """The two connector files, as a Confluent user writes them (the database's URL filled)."""
    source = {
        "name": "shop-source",
        "config": {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": url,
            "connection.user": "postgres",
            "mode": "timestamp+incrementing",
            "incrementing.column.name": "id",
            "timestamp.column.name": "modified",
            "table.whitelist": "orders",
            "topic.prefix": "shop-",
            "poll.interval.ms": "1000",
            # each order's records keyed by its id, so that they stay in order in one partition
            "transforms": "key",
            "transforms.key.type": "org.apache.kafka.connect.transforms.ValueToKey",
            "transforms.key.fields": "id",
            **JSON,
        },
    }
    sink = {
        "name": "shop-sink",
        "config": {
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "topics": "shop-orders",
            "connection.url": f"jdbc:sqlite:{DEMO / 'shop.db'}",
            "insert.mode": "upsert",
            "pk.mode": "record_value",
            "pk.fields": "id",
            "auto.create": "true",
            "auto.evolve": "true",
            **JSON,
        },
    }
    DEMO.mkdir(parents=True, exist_ok=True)
    files = []
    for config in (source, sink):
        path = DEMO / f"{config['name']}.json"
        path.write_text(json.dumps(config, indent=2) + "\n")
        files.append(path)
    return files


def main() -> int:
    try:
        server = PostgresServer().start()
    except RuntimeError as error:
        print(f"The JDBC demo needs a local PostgreSQL: {error}", file=sys.stderr)
        return 1
    stop = threading.Event()
    try:
        database = server.create_database("shop")
        server.query(
            database,
            "CREATE TABLE orders (id SERIAL PRIMARY KEY, item TEXT NOT NULL, qty INT NOT NULL, "
            "modified TIMESTAMP NOT NULL DEFAULT now())",
        )
        server.query(database, "INSERT INTO orders (item, qty) VALUES ('apple', 3), ('pear', 1)")

        def orders() -> None:
            n = 0
            while not stop.wait(2.0):
                n += 1
                try:
                    server.query(database, "INSERT INTO orders (item, qty) VALUES (%s, %s)",
                                 f"item-{n}", n % 7 + 1)  # fmt: skip
                except Exception:  # the database stops with the demo
                    return

        threading.Thread(target=orders, name="orders", daemon=True).start()
        files = connectors(server.url(database))
        worker = subprocess.Popen(
            [str(REPO / "scripts" / "run.sh"), "--fresh", *map(str, files), *sys.argv[1:]]
        )
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda s, _f: worker.send_signal(s))
        return worker.wait()
    finally:
        stop.set()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
