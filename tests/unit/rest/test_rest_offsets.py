"""The KIP-875 routes over a fake herder: parsing of the body, JSON shapes, the delete flag.

Messages are the fake's; Kafka's texts are checked over the real herder (test_rest_real_herder).
"""

from __future__ import annotations

from flask.testing import FlaskClient

from connect_lite.control.entities import ConnectorOffset, ConnectorOffsets

from .fake_herder import NO_OFFSETS, NOT_FOUND, FakeHerder


def test_get_offsets_renders_the_kip_shape(client: FlaskClient, with_connector: str) -> None:
    response = client.get(f"/connectors/{with_connector}/offsets")
    assert response.status_code == 200
    assert response.get_json() == {
        "offsets": [{"partition": {"file": "a.txt"}, "offset": {"position": 42}}]
    }
    missing = client.get("/connectors/nope/offsets")
    assert (missing.status_code, missing.get_json()["message"]) == (404, NOT_FOUND.format("nope"))


def test_patch_parses_numbers_nulls_and_missing_offsets(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    body = {
        "offsets": [
            {"partition": {"p": 1}, "offset": {"n": 2.5, "s": "3", "b": True}},
            {"partition": {"p": 2}, "offset": None},
            {"partition": {"p": 3}},
        ]
    }
    response = client.patch(f"/connectors/{with_connector}/offsets", json=body)
    assert (response.status_code, response.get_json()) == (200, {"message": "altered"})
    assert herder.calls[-1] == (
        "alter_offsets",
        with_connector,
        ConnectorOffsets(
            [
                ConnectorOffset({"p": 1}, {"n": 2.5, "s": "3", "b": True}),
                ConnectorOffset({"p": 2}, None),
                ConnectorOffset({"p": 3}, None),
            ]
        ),
    )
    assert type(herder.calls[-1][2].offsets[0].partition["p"]) is int


def test_patch_without_a_body_is_an_empty_request(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    response = client.patch(f"/connectors/{with_connector}/offsets")
    assert herder.calls[-1] == ("alter_offsets", with_connector, ConnectorOffsets([]))
    assert (response.status_code, response.get_json()["message"]) == (400, NO_OFFSETS)


def test_patch_with_wrong_json_types_is_400(client: FlaskClient, with_connector: str) -> None:
    for raw in ('{"offsets": 1}', '{"offsets": [{"offset": []}]}', '{"offsets": [], "a": 1}'):
        response = client.patch(
            f"/connectors/{with_connector}/offsets", data=raw, content_type="application/json"
        )
        assert response.status_code == 400, raw


def test_delete_offsets_and_delete_with_offsets(
    client: FlaskClient, herder: FakeHerder, with_connector: str
) -> None:
    response = client.delete(f"/connectors/{with_connector}/offsets")
    assert (response.status_code, response.get_json()) == (200, {"message": "reset"})
    assert client.delete(f"/connectors/{with_connector}?includeOffsets=True").status_code == 204
    assert herder.calls[-1] == ("delete", with_connector, True)
