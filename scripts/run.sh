#!/usr/bin/env bash
# Sets up on first use, then runs the worker with standalone.properties (embedded broker on) and the
# demo pipeline: data/demo/input.txt -> Kafka topic connect-lite-demo -> data/demo/output.txt.
# scripts/run.sh --fresh first removes the demo's state file and outputs (scripts/demo/start_fresh.py):
# the embedded broker keeps topics in memory, so a demo run again resumes after records that are gone.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ "${1:-}" = "--fresh" ]; then
  shift
  .venv/bin/python scripts/demo/start_fresh.py
fi
.venv/bin/python scripts/demo/make_input.py
exec .venv/bin/python app.py standalone.properties scripts/demo/file-source.json scripts/demo/file-sink.json "$@"
