"""Packing plugin locations and connect_lite for executors, and loading a location's copy."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from connect_lite.pipeline.session_start import effective_conf
from connect_lite.pipeline.shipping import archive_name, content_hash, is_local, pack
from connect_lite.plugins import isolation
from connect_lite.plugins.isolation import PluginRef

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


@pytest.mark.parametrize(
    ("master", "local"),
    [
        ("local", True),
        ("local[*]", True),
        ("local[2,3]", True),
        ("local-cluster[2,1,1024]", False),
        ("spark://127.0.0.1:7077", False),
        ("k8s://https://k:6443", False),
        ("yarn", False),
    ],
)
def test_only_local_masters_skip_shipping(master: str, local: bool) -> None:
    assert is_local(master) is local


def test_a_cluster_gets_no_driver_path_on_its_executors() -> None:
    assert "spark.executorEnv.PYTHONPATH" in effective_conf({"spark.master": "local[2]"})
    cluster = effective_conf({"spark.master": "spark://127.0.0.1:7077"})
    assert "spark.executorEnv.PYTHONPATH" not in cluster
    given = {"spark.master": "yarn", "spark.executorEnv.PYTHONPATH": "/opt/x"}
    assert effective_conf(given)["spark.executorEnv.PYTHONPATH"] == "/opt/x"


def test_archives_are_named_by_location_and_content(tmp_path: Path) -> None:
    copy = shutil.copytree(PLUGINS / "stamp-1.0.0", tmp_path / "stamp-1.0.0")
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "stamp.cpython-311.pyc").write_bytes(b"ignored")
    before = content_hash(copy)
    assert before == content_hash(PLUGINS / "stamp-1.0.0")  # same files, same hash
    name = archive_name(str(copy), before)
    assert name.startswith("stamp_1_0_0_") and name.endswith(f"-{before}.zip")
    assert name != archive_name(str(PLUGINS / "stamp-1.0.0"), before)  # another location
    with zipfile.ZipFile(pack(copy, tmp_path / name)) as archive:
        assert sorted(archive.namelist()) == ["stamp.py", "stamp_version.py"]
    (copy / "stamp_version.py").write_text('VERSION = "1.0.1"\n')
    assert content_hash(copy) != before


def test_a_location_loads_from_its_copy_under_the_original_name(tmp_path: Path) -> None:
    """As on an executor: the path the worker found the plugin at does not exist here."""
    origin = str(tmp_path / "elsewhere" / "stamp-2.0.0")
    copy = shutil.copytree(PLUGINS / "stamp-2.0.0", tmp_path / "unpacked.zip")
    with pytest.raises(ImportError, match="not a directory"):
        isolation.register_location(origin)
    package = isolation.use_copy(origin, str(copy))
    assert package == isolation.location_package(origin)
    cls = PluginRef(origin, "stamp", "StampTransformation").load()
    assert cls.__module__ == f"{package}.stamp"
    assert cls().version() == "2.0.0"
    module = isolation.location_modules(origin)["stamp"]
    assert Path(module.__file__ or "").parent == copy
    assert Path(module.stamp_version.__file__).parent == copy  # its sibling, from the copy
