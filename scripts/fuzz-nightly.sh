#!/usr/bin/env bash
# The long fuzzing run of the REST API, for a nightly job: the same test as CI's
# (tests/integration/test_rest_fuzz.py), with 200 examples per operation and a fresh seed.
# Schemathesis prints the seed it chose; CONNECT_LITE_FUZZ_SEED=<seed> repeats a run.
set -euo pipefail
cd "$(dirname "$0")/.."
export CONNECT_LITE_FUZZ_EXAMPLES="${CONNECT_LITE_FUZZ_EXAMPLES:-200}"
export CONNECT_LITE_FUZZ_SEED="${CONNECT_LITE_FUZZ_SEED:-random}"
export CONNECT_LITE_FUZZ_TIME_LIMIT_S="${CONNECT_LITE_FUZZ_TIME_LIMIT_S:-14400}"
exec scripts/test.sh tests/integration/test_rest_fuzz.py -p no:cacheprovider "$@"
