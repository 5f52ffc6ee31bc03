"""Isolated loading of plugin locations: side-by-side versions, sibling imports, fresh processes."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from connect_lite.plugins import isolation
from connect_lite.plugins.types import PluginRef

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
V1, V2 = str(PLUGINS / "versioned-1.0.0"), str(PLUGINS / "versioned-2.0.0")


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _bare(names: tuple[str, ...]) -> list[str]:
    return [m for m in sys.modules if m.split(".")[0] in names]


def test_two_versions_load_side_by_side_and_each_sees_its_own_helper() -> None:
    one = isolation.load_location(V1)
    two = isolation.load_location(V2)
    assert one.__name__ != two.__name__
    assert one.acme_versioned.helper_version() == "1.0.0"
    assert two.acme_versioned.helper_version() == "2.0.0"
    assert one.acme_versioned.package_description() == "acme_pkg at 1.0.0"
    assert two.acme_versioned.package_description() == "acme_pkg at 2.0.0"
    assert one.acme_versioned.VersionedConverter is not two.acme_versioned.VersionedConverter
    assert _bare(("acme_helpers", "acme_versioned", "acme_pkg")) == []


def test_a_same_named_module_on_sys_path_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = _write(tmp_path / "shadow", {"acme_helpers.py": "VERSION = 'shadow'\n"})
    monkeypatch.syspath_prepend(str(shadow))
    monkeypatch.delitem(sys.modules, "acme_helpers", raising=False)
    import acme_helpers  # type: ignore[import-not-found]  # the shadowing copy

    try:
        assert acme_helpers.VERSION == "shadow"
        module = isolation.load_location(V1).acme_versioned
        assert module.helper_version() == "1.0.0"
        assert module.acme_helpers is not acme_helpers
    finally:
        sys.modules.pop("acme_helpers", None)


def test_every_import_form_resolves_inside_the_location(tmp_path: Path) -> None:
    files = {
        "helpers.py": "NAME = 'helpers'\n",
        "mypkg/__init__.py": "from .sub import VALUE\n",
        "mypkg/sub.py": "from . import leaf\nVALUE = 'sub+' + leaf.LEAF\n",
        "mypkg/leaf.py": "LEAF = 'leaf'\n",
        "nsdir/mod.py": "X = 'namespace'\n",
        "main.py": """
            import helpers
            import mypkg.sub
            import mypkg.sub as aliased
            from helpers import NAME
            from mypkg.sub import VALUE
            from mypkg import leaf
            import nsdir.mod

            def late():
                import helpers as again
                return again.NAME

            result = (helpers.NAME, NAME, mypkg.sub.VALUE, aliased.VALUE, VALUE, leaf.LEAF,
                      nsdir.mod.X, late())
        """,
    }
    location = _write(tmp_path / "loc", files)
    package = isolation.load_location(str(location))
    expected = (
        "helpers",
        "helpers",
        "sub+leaf",
        "sub+leaf",
        "sub+leaf",
        "leaf",
        "namespace",
        "helpers",
    )
    assert package.main.result == expected
    assert package.main.mypkg is package.mypkg
    assert _bare(("helpers", "mypkg", "main", "nsdir")) == []
    assert not (location / "__pycache__").exists()  # rewritten code is never cached on disk


def test_loading_one_location_leaves_the_other_untouched(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {"common.py": "WHO = 'a'\n", "top.py": "import common\n"})
    b = _write(tmp_path / "b", {"common.py": "WHO = 'b'\n", "top.py": "import common\n"})
    isolation.load_location(str(a))
    assert isolation.location_modules(str(b)) == {}
    assert isolation.load_location(str(b)).top.common.WHO == "b"
    assert isolation.location_modules(str(a))["common"].WHO == "a"


def test_package_names_are_deterministic_and_distinct(tmp_path: Path) -> None:
    assert isolation.location_package(V1) == isolation.location_package(V1 + "/")
    assert isolation.location_package(V1) != isolation.location_package(V2)
    assert isolation.location_package(str(tmp_path / "1.0")).split(".")[1][0].isalpha()
    code = f"from connect_lite.plugins import isolation; print(isolation.location_package({V1!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == isolation.location_package(V1)


def test_a_failing_location_raises(tmp_path: Path) -> None:
    broken = _write(tmp_path / "broken", {"bad.py": "import helper_that_is_missing\n"})
    with pytest.raises(ImportError):
        isolation.load_location(str(broken))


def test_load_class_of_a_builtin_and_of_a_location() -> None:
    json_ref = PluginRef(None, "connect_lite.converters.json", "JsonConverter")
    assert json_ref.load().__name__ == "JsonConverter"
    cls = PluginRef(V2, "acme_versioned", "VersionedSourceConnector").load()
    assert cls().version() == "2.0.0"
    with pytest.raises(AttributeError):
        PluginRef(V2, "acme_versioned", "Missing").load()


_CHILD = """
import pickle, sys
ref = pickle.loads(bytes.fromhex(sys.argv[1]))
cls = ref.load()
bare = [m for m in sys.modules if m.split(".")[0] in ("acme_helpers", "acme_versioned")]
print(cls().version(), cls.__module__.startswith("_connect_lite_plugins."), bare)
"""


def test_a_fresh_process_loads_a_class_from_a_plugin_ref_alone() -> None:
    for location, version in ((V1, "1.0.0"), (V2, "2.0.0")):
        ref = PluginRef(location, "acme_versioned", "VersionedConverter")
        env = {k: v for k, v in os.environ.items() if k != isolation.ENV_LOCATIONS}
        argv = [sys.executable, "-c", _CHILD, pickle.dumps(ref).hex()]
        out = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
        assert out.stdout.split() == [version, "True", "[]"]


def test_a_child_process_unpickles_instances_of_isolated_classes() -> None:
    cls = PluginRef(V1, "acme_versioned", "VersionedConverter").load()
    payload = pickle.dumps(cls()).hex()
    code = (
        "import pickle, sys, connect_lite.plugins.isolation\n"
        "obj = pickle.loads(bytes.fromhex(sys.argv[1]))\n"
        "print(obj.version(), obj.from_connect_data('t', None, 'x').decode())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, payload], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["1.0.0", "1.0.0:x"]
