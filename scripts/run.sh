#!/usr/bin/env bash
# Sets up on first use, then runs the worker with standalone.properties (embedded broker on) and the
# demo pipeline: data/demo/input.txt -> Kafka topic connect-lite-demo -> data/demo/output.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/python scripts/demo/make_input.py
exec .venv/bin/python app.py standalone.properties scripts/demo/file-source.json scripts/demo/file-sink.json "$@"
