#!/usr/bin/env bash
# Starts or stops a Spark standalone cluster on 127.0.0.1 from the pyspark wheel in .venv:
#   scripts/spark-cluster.sh start [--workers N] [--port 7077] [--webui-port 8080]
#   scripts/spark-cluster.sh stop
# A master and N workers (1 core, 1 GiB each); start prints the master URL for spark.master.
# Logs, pids and the workers' work directories are in data/spark-cluster/ (--dir to change).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" exec .venv/bin/python -m connect_lite.testing.spark_cluster "$@"
