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
  .venv/bin/python -m pip install --quiet -c constraints.txt -e '.[dev,postgres,mysql,http,mqtt]'
  rm -f .venv/.installed-*
  touch "$stamp"
fi

# A class-data-sharing archive of Spark's classes, built once per Java and PySpark into
# ~/.cache/connect-lite (connect_lite/pipeline/class_archive.py and class_archive_build.py):
# Spark's session then starts in about half the time. Quick when it is there; without it the
# worker only starts slower.
.venv/bin/python -m connect_lite.pipeline.class_archive_build

# `scripts/setup.sh --tests` (what scripts/test.sh runs; `--browser` is its older name) also makes
# sure the servers the tests start for themselves are there: headless Chromium for the browser
# tests of the status page (Debian's `chromium`), PostgreSQL 15 and MariaDB for the JDBC
# connectors' tests (Debian's `postgresql` and `mariadb-server`; the tests run initdb and pg_ctl,
# mariadb-install-db and mariadbd themselves, no system service), and Mosquitto 2 for the MQTT
# connectors' tests (Debian's `mosquitto`, started on its own config file). They are
# installed with apt-get when missing on Debian and this user may install packages. Elsewhere it
# says what to install, and only the tests that need them fail.
if [ "${1:-}" = "--tests" ] || [ "${1:-}" = "--browser" ]; then
  missing=()
  if ! command -v chromium >/dev/null 2>&1 && [ -z "${CONNECT_LITE_CHROMIUM:-}" ]; then
    missing+=(chromium)
  fi
  if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! command -v pg_ctl >/dev/null 2>&1; then
    missing+=(postgresql)
  fi
  if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
    missing+=(mariadb-server)
  fi
  if ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ]; then
    missing+=(mosquitto)
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ -f /etc/debian_version ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "Installing what the tests need (apt-get install ${missing[*]})..." >&2
      # The packages would start their system services (PostgreSQL, MariaDB, Mosquitto); the
      # tests start servers of their own, so a policy-rc.d keeps them stopped while they install.
      policy=""
      if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
      fi
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
      [ -z "$policy" ] || rm -f "$policy"
    else
      cat >&2 <<MSG
Warning: the tests need ${missing[*]}, which is not installed, so the tests that use it will
fail. Install it (Debian: sudo apt-get install -y ${missing[*]}); for Chromium you may instead
set CONNECT_LITE_CHROMIUM to the path of a Chromium or Chrome binary.
MSG
    fi
  fi
fi
