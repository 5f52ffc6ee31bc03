"""pgoutput protocol 1 messages, as PostgreSQL's proto.c writes them, decoded."""

from __future__ import annotations

import struct

from connect_lite.connectors.postgres_cdc.pgoutput import (
    PG_EPOCH_US,
    UNCHANGED,
    Begin,
    Change,
    Commit,
    Relation,
    Truncate,
    decode,
    lsn_int,
    lsn_text,
)


def tuple_data(*values: object) -> bytes:
    out = struct.pack(">h", len(values))
    for value in values:
        if value is None:
            out += b"n"
        elif value is UNCHANGED:
            out += b"u"
        else:
            data = str(value).encode()
            out += b"t" + struct.pack(">i", len(data)) + data
    return out


def test_begin_and_commit_carry_positions_times_and_the_xid() -> None:
    begin = decode(b"B" + struct.pack(">qqI", 0x1924850, 1_000_000, 4_000_000_000))
    assert begin == Begin(0x1924850, PG_EPOCH_US + 1_000_000, 4_000_000_000)  # xid unsigned
    commit = decode(b"C" + struct.pack(">bqqq", 0, 0x1924850, 0x1924880, 5))
    assert commit == Commit(0x1924850, 0x1924880, PG_EPOCH_US + 5)


def test_a_relation_lists_its_columns_with_their_key_flags() -> None:
    body = struct.pack(">I", 16385) + b"public\0orders\0" + b"d" + struct.pack(">h", 2)
    body += b"\x01id\0" + struct.pack(">Ii", 23, -1) + b"\x00item\0" + struct.pack(">Ii", 25, -1)
    relation = decode(b"R" + body)
    assert isinstance(relation, Relation)
    assert (relation.oid, relation.schema, relation.table) == (16385, "public", "orders")
    assert relation.replica_identity == "d"
    assert [(c.name, c.type_oid, c.key) for c in relation.columns] == [
        ("id", 23, True),
        ("item", 25, False),
    ]
    catalog = decode(b"R" + struct.pack(">I", 1) + b"\0t\0f" + struct.pack(">h", 0))
    assert isinstance(catalog, Relation) and catalog.schema == "pg_catalog"


def test_inserts_updates_and_deletes_with_old_keys_rows_and_unchanged_toast() -> None:
    oid = struct.pack(">I", 7)
    assert decode(b"I" + oid + b"N" + tuple_data("1", None)) == Change("c", 7, ("1", None), None)
    plain = decode(b"U" + oid + b"N" + tuple_data("1", UNCHANGED))
    assert plain == Change("u", 7, ("1", UNCHANGED), None)
    keyed = decode(b"U" + oid + b"K" + tuple_data("1", None) + b"N" + tuple_data("2", "x"))
    assert keyed == Change("u", 7, ("2", "x"), ("1", None), True)
    full = decode(b"U" + oid + b"O" + tuple_data("1", "a") + b"N" + tuple_data("1", "b"))
    assert full == Change("u", 7, ("1", "b"), ("1", "a"), False)
    deleted = decode(b"D" + oid + b"K" + tuple_data("1", None))
    assert deleted == Change("d", 7, None, ("1", None), True)


def test_truncate_lists_its_relations_and_other_messages_are_skipped() -> None:
    body = struct.pack(">ib", 2, 0) + struct.pack(">II", 7, 8)
    assert decode(b"T" + body) == Truncate((7, 8))
    assert decode(b"O" + struct.pack(">q", 1) + b"origin\0") is None


def test_lsns_print_as_postgresql_prints_them() -> None:
    assert lsn_text(0x1_0000_00A0) == "1/A0"
    assert lsn_int("1/A0") == 0x1_0000_00A0
    assert lsn_int(lsn_text(26363584)) == 26363584
