"""The command line: ``python app.py worker.properties [connector files ...]``."""

from __future__ import annotations

import logging
import signal
import sys
import threading

from connect_lite.api.errors import ConfigError, ConnectError

log = logging.getLogger("connect_lite")

USAGE = "Usage: python app.py worker.properties [connector1.properties connector2.json ...]"
EXIT_STARTUP_FAILED = 2
EXIT_CONNECTOR_FILE_FAILED = 3


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 1
    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)"
    )
    # imported late: --help stays fast
    from connect_lite.storage.base import StateFileError
    from connect_lite.worker_main import ConnectorFileError, start_worker

    stop_requested = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop_requested.set())
    try:
        running = start_worker(args[0], args[1:])
    except ConfigError as error:
        print(f"Invalid worker configuration:\n{error}", file=sys.stderr)
        return EXIT_STARTUP_FAILED
    except ConnectorFileError as error:
        log.error("%s", error)
        return EXIT_CONNECTOR_FILE_FAILED
    except StateFileError as error:
        log.error("%s", error)  # one line that names the file and what to do; no traceback
        return EXIT_STARTUP_FAILED
    except ConnectError as error:
        log.error("Stopping after startup failure: %s", error)
        return EXIT_STARTUP_FAILED
    log.info("connect-lite is running: REST API at %s", running.rest_url)
    # A timed wait: Python runs a signal handler only in the main thread, between bytecodes,
    # and a signal that lands on another thread does not wake a wait without a timeout.
    while not stop_requested.wait(timeout=0.5):
        pass
    log.info("Stopping connect-lite")
    running.stop()
    log.info("connect-lite stopped")
    return 0
