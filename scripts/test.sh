#!/usr/bin/env bash
# Sets up on first use, then runs the whole test suite (unit, contract and integration tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
exec .venv/bin/python -m pytest "$@"
