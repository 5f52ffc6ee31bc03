#!/usr/bin/env bash
# Sets up .venv on first use (and again whenever pyproject.toml or constraints.txt changes), with
# the exact versions of constraints.txt. Safe to run every time.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v java >/dev/null 2>&1; then
  cat >&2 <<'MSG'
connect-lite needs Java 17 or newer (PySpark 4 runs on the JVM), and `java` is not on PATH.
Install it, then run this command again:
  Debian/Ubuntu:  sudo apt-get install -y openjdk-17-jre-headless
  Fedora/RHEL:    sudo dnf install -y java-17-openjdk-headless
  macOS:          brew install openjdk@17
Or set JAVA_HOME and put $JAVA_HOME/bin on PATH.
MSG
  exit 1
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "connect-lite needs Python 3.11 or newer; '$PYTHON' is $("$PYTHON" --version 2>&1)." >&2
  exit 1
fi

stamp=".venv/.installed-$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "Setting up .venv (first use or dependencies changed)..." >&2
  [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -c constraints.txt -e '.[dev]'
  rm -f .venv/.installed-*
  touch "$stamp"
fi

# A class-data-sharing archive of Spark's classes, built once per Java and PySpark into
# ~/.cache/connect-lite (connect_lite/pipeline/class_archive.py and class_archive_build.py):
# Spark's session then starts in about half the time. Quick when it is there; without it the
# worker only starts slower.
.venv/bin/python -m connect_lite.pipeline.class_archive_build

# `scripts/setup.sh --browser` (what scripts/test.sh runs) also makes sure headless Chromium is
# there for the browser tests of the status page: Debian's `chromium` package, installed with
# apt-get when it is missing on Debian and this user may install packages. Elsewhere it says
# what to install, and only the browser tests fail.
if [ "${1:-}" = "--browser" ] && ! command -v chromium >/dev/null 2>&1 \
    && [ -z "${CONNECT_LITE_CHROMIUM:-}" ]; then
  if [ -f /etc/debian_version ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "Installing Chromium for the browser tests (apt-get install chromium)..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    cat >&2 <<'MSG'
Warning: the browser tests of the status page need headless Chromium, and `chromium` is not on
PATH, so they will fail. Install it (Debian: sudo apt-get install -y chromium), or set
CONNECT_LITE_CHROMIUM to the path of a Chromium or Chrome binary.
MSG
  fi
fi
