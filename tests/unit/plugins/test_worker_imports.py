"""The worker process scans the built-in connectors and plugin.path as Kafka's worker scans its
plugins, importing every module; none of them may pull the data plane's libraries into it
(jdbc/writer.py once imported pyarrow and NumPy: 50 MiB of the worker's memory)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DATA_PLANE_ONLY = ("pyarrow", "numpy", "pandas", "pyspark", "py4j", "psycopg", "pymysql")


def test_scanning_the_shipped_plugins_imports_no_data_plane_library() -> None:
    code = f"""
import sys
from connect_lite.config.properties import load_properties
from connect_lite.plugins.registry import Plugins
from connect_lite.worker_main import plugin_modules_of, plugin_path_of
props = load_properties("standalone.properties")
plugins = Plugins(plugin_path_of(props), plugin_modules=plugin_modules_of(props))
assert plugins.resolve_name("JdbcSink") == "io.confluent.connect.jdbc.JdbcSinkConnector"
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({DATA_PLANE_ONLY!r}))
assert not loaded, loaded
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
