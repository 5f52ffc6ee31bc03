"""Java .properties parsing and connector files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connect_lite.api.errors import ConfigError
from connect_lite.config.properties import load_connector_file, load_properties, parse_properties


def test_separators_and_whitespace() -> None:
    text = "a=1\nb: 2\nc 3\n  d  =  4  \ne\t\t5\nf = = 6\ng :x\n"
    assert parse_properties(text) == {
        "a": "1",
        "b": "2",
        "c": "3",
        "d": "4  ",  # Java keeps trailing whitespace of a value
        "e": "5",
        "f": "= 6",  # only the first separator counts
        "g": "x",
    }


def test_comments_and_blank_lines() -> None:
    text = "# comment\n! also a comment\n   # indented comment\n\n   \nkey=value # not a comment\n"
    assert parse_properties(text) == {"key": "value # not a comment"}


def test_key_without_value() -> None:
    assert parse_properties("lonely\nempty=\n") == {"lonely": "", "empty": ""}


def test_line_continuations() -> None:
    text = "list=a,\\\n     b,\\\n\tc\nnext=1\n"
    assert parse_properties(text) == {"list": "a,b,c", "next": "1"}


def test_even_backslashes_do_not_continue() -> None:
    assert parse_properties("path=c:\\\\\nother=x\n") == {"path": "c:\\", "other": "x"}


def test_comment_lines_do_not_continue() -> None:
    assert parse_properties("# a comment \\\nkey=v\n") == {"key": "v"}


def test_escapes() -> None:
    text = "tab=a\\tb\nuni=caf\\u00e9\nsp\\ ace=x\nco\\:lon=y\neq\\=k=z\nnl=1\\n2\nother=\\q\n"
    assert parse_properties(text) == {
        "tab": "a\tb",
        "uni": "café",
        "sp ace": "x",
        "co:lon": "y",
        "eq=k": "z",
        "nl": "1\n2",
        "other": "q",
    }


def test_malformed_unicode_escape() -> None:
    with pytest.raises(ConfigError, match="Malformed"):
        parse_properties("k=\\u12G4\n")


def test_crlf_and_last_line_without_newline() -> None:
    assert parse_properties("a=1\r\nb=2\rc=3") == {"a": "1", "b": "2", "c": "3"}


def test_dangling_backslash_at_end_of_file() -> None:
    assert parse_properties("a=1\\") == {"a": "1"}


def test_later_keys_win() -> None:
    assert parse_properties("a=1\na=2\n") == {"a": "2"}


def test_load_properties_reads_utf8_and_latin1(tmp_path: Path) -> None:
    utf8 = tmp_path / "u.properties"
    utf8.write_text("name=café\n", encoding="utf-8")
    latin = tmp_path / "l.properties"
    latin.write_bytes("name=café\n".encode("iso-8859-1"))
    assert load_properties(utf8) == {"name": "café"}
    assert load_properties(latin) == {"name": "café"}


def _write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content)
    return path


def test_connector_file_flat_json(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.json", json.dumps({"name": "c1", "tasks.max": 2, "x": True}))
    assert load_connector_file(path) == (
        "c1",
        {"name": "c1", "tasks.max": "2", "x": "true"},
        None,
    )


def test_connector_file_flat_json_without_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.json", json.dumps({"connector.class": "X"}))
    with pytest.raises(ConfigError) as err:
        load_connector_file(path)
    assert str(err.value) == (
        f"Connector configuration at '{path}' is missing the mandatory 'name' configuration"
    )


def test_connector_file_create_request(tmp_path: Path) -> None:
    body = {"name": "c2", "config": {"connector.class": "X"}, "initial_state": "paused"}
    path = _write(tmp_path, "c.json", json.dumps(body))
    assert load_connector_file(path) == ("c2", {"connector.class": "X", "name": "c2"}, "PAUSED")


def test_connector_file_create_request_ignores_unknown_fields(tmp_path: Path) -> None:
    body = {"name": "c2", "config": {"name": "c2"}, "extra": {"a": 1}}
    path = _write(tmp_path, "c.json", json.dumps(body))
    assert load_connector_file(path) == ("c2", {"name": "c2"}, None)


def test_connector_file_create_request_name_mismatch(tmp_path: Path) -> None:
    body = {"name": "c2", "config": {"name": "other"}}
    path = _write(tmp_path, "c.json", json.dumps(body))
    with pytest.raises(ConfigError) as err:
        load_connector_file(path)
    assert str(err.value) == (
        "Connector name configuration in 'config' doesn't match the one specified in 'name' "
        f"at '{path}'"
    )


def test_connector_file_create_request_bad_initial_state(tmp_path: Path) -> None:
    body = {"name": "c2", "config": {}, "initial_state": "SLEEPING"}
    path = _write(tmp_path, "c.json", json.dumps(body))
    with pytest.raises(ConfigError, match="initial_state 'SLEEPING'"):
        load_connector_file(path)


def test_connector_file_properties(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.properties", "name=c3\nconnector.class=FileStreamSource\n")
    assert load_connector_file(path) == (
        "c3",
        {"name": "c3", "connector.class": "FileStreamSource"},
        None,
    )


def test_connector_file_properties_without_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.properties", "connector.class=FileStreamSource\n")
    with pytest.raises(ConfigError, match="missing the mandatory 'name' configuration"):
        load_connector_file(path)


def test_connector_file_json_null_value_is_kept_for_validation(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.json", json.dumps({"name": "c", "topics": None}))
    assert load_connector_file(path)[1] == {"name": "c", "topics": None}
