"""The command line: ``connect-lite [options] worker.properties [connector files ...]``, and
``connect-lite consume TOPIC``, which prints what a topic holds."""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import platform
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from connect_lite import __version__
from connect_lite.api.errors import ConfigError, ConnectError
from connect_lite.config.properties import ConnectorFile, load_properties
from connect_lite.logs.context import Verbatim
from connect_lite.logs.setup import LOG_FORMATS, LOG_LEVELS, configure_logging

if TYPE_CHECKING:
    from connect_lite.kafka import Admin

log = logging.getLogger(__name__)

PROG = "connect-lite"
USAGE = f"{PROG} [options] worker.properties [connector1.properties connector2.json ...]"
EXIT_USAGE = 1
"""A bad option, or a file named on the command line that cannot be read."""
EXIT_STARTUP_FAILED = 2
EXIT_CONNECTOR_FILE_FAILED = 3

LOG_FORMAT_KEY = "log.format"
"""The worker key that chooses the log format when ``--log-format`` is not given."""

_DESCRIPTION = """\
Run a Kafka Connect standalone worker, like connect-standalone.sh. Connector files are a flat
JSON map with "name", a {"name", "config", "initial_state"} JSON object, or a .properties file;
all are read before the worker starts. A connector that exists in the state file already is
kept as stored."""

_EPILOG = f"""\
exit codes: 0 stopped by SIGTERM or SIGINT; 1 bad usage, or a file on the command line cannot
be read; 2 start-up failure (for example a bad worker config); 3 a connector file is invalid
or its connector cannot be created.

{PROG} consume --help: print the records of a topic."""

CONSUME = "consume"
"""The first argument that runs ``connect-lite consume`` instead of a worker."""

_CONSUME_DESCRIPTION = """\
Print the values of a topic's records, one a line (UTF-8; "null" for a null value), from the
beginning of every partition, without a consumer group: like kafka-console-consumer.sh
--from-beginning. Waits for the topic to exist. With the embedded broker, the worker logs its
address ("Embedded broker listening at 127.0.0.1:PORT"), or set embedded.broker.port.

exit codes: 0 done; 1 bad usage; 2 the topic did not appear within --timeout-ms."""


class _UsageError(Exception):
    """argparse found a bad command line."""


class _Exit(Exception):  # not an error: --help and --version end here
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Stop(Exception):  # carries an exit code, not always an error
    """Stop before the worker starts, with this message and exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that returns to ``main`` instead of calling ``sys.exit``."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help=kwargs.get("help"))

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(version_text())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        usage=USAGE,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("worker_properties", metavar="worker.properties", help="worker config")
    parser.add_argument(
        "connector_files",
        metavar="connector-file",
        nargs="*",
        default=[],
        help="connectors to create",
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="print the versions of connect-lite, Spark, "
        "confluent-kafka, librdkafka and Python, and exit",
    )
    parser.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        help="root log level, log4j's names in any case (default: INFO, or the --log-config "
        "file's)",
    )
    parser.add_argument(
        "--log-config",
        metavar="FILE",
        help="a logging dictConfig dictionary in JSON, instead of the default stderr handler",
    )
    parser.add_argument(
        "--log-format",
        type=str.lower,
        choices=LOG_FORMATS,
        help=f"text (Kafka's layout) or json (one object a line); default: the worker key "
        f"{LOG_FORMAT_KEY}, else text",
    )
    return parser


def build_consume_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=f"{PROG} {CONSUME}",
        description=_CONSUME_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("topic", help="the topic to read")
    parser.add_argument(
        "--bootstrap-server", required=True, metavar="HOST:PORT", help="the Kafka brokers"
    )
    parser.add_argument(
        "--max-messages", type=int, metavar="N", help="exit after N records (default: no limit)"
    )
    parser.add_argument(
        "--timeout-ms",
        type=int,
        default=30_000,
        metavar="MS",
        help="exit when no record arrived for this long (default: 30000)",
    )
    return parser


def version_text() -> str:
    """connect-lite's version and those of what it runs on; imports neither Spark nor Java."""
    from connect_lite.kafka.native import client_versions  # imported late: --help stays fast

    kafka, librdkafka = client_versions()
    return "\n".join(
        [
            f"{PROG} {__version__}",
            # The distribution's metadata: importing pyspark is not needed for its version.
            f"Spark (pyspark) {_distribution_version('pyspark')}",
            f"confluent-kafka {kafka}, librdkafka {librdkafka}",
            f"Python {platform.python_version()} ({platform.python_implementation()})",
        ]
    )


def _distribution_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [CONSUME]:
        return _consume_main(argv[1:])
    parser = build_parser()
    args = _parsed(parser, lambda: parser.parse_intermixed_args(argv), PROG)
    if isinstance(args, int):
        return args
    try:
        props, connectors = _prepare(args)
    except _Stop as stop:
        if stop.code == EXIT_CONNECTOR_FILE_FAILED:
            log.error("%s", Verbatim(stop))
        else:
            print(f"{PROG}: {stop}", file=sys.stderr)
        return stop.code
    return _run(props, connectors)


def _parsed(
    parser: argparse.ArgumentParser, parse: Callable[[], argparse.Namespace], prog: str
) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code of --help, --version or a usage error (its
    usage and message printed)."""
    try:
        return parse()
    except _Exit as done:
        return done.status
    except _UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"{prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


def _consume_main(argv: list[str]) -> int:
    parser = build_consume_parser()
    args = _parsed(parser, lambda: parser.parse_args(argv), f"{PROG} {CONSUME}")
    if isinstance(args, int):
        return args
    try:
        count = consume(args.bootstrap_server, args.topic, args.max_messages, args.timeout_ms)
    except ConnectError as error:
        print(f"{PROG} {CONSUME}: {error}", file=sys.stderr)
        return EXIT_STARTUP_FAILED
    except KeyboardInterrupt:  # Ctrl-C while waiting for the topic
        count = 0
    print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0


def consume(servers: str, topic: str, max_messages: int | None, timeout_ms: int) -> int:
    """Print ``topic``'s record values from the beginning; how many were printed.

    Stops after ``max_messages``, when nothing arrived for ``timeout_ms``, or on Ctrl-C.
    Raises ConnectError when the topic did not appear within ``timeout_ms``.
    """
    from connect_lite.api.records import TopicPartition
    from connect_lite.kafka import Admin, Consumer  # imported late: --help stays fast

    idle = timeout_ms / 1000
    deadline = time.monotonic() + idle
    with Admin({"bootstrap.servers": servers}, timeout=1.0) as admin:
        partitions = _wait_for_partitions(admin, topic, deadline)
    if partitions is None:
        raise ConnectError(
            f"Topic {topic} did not appear at {servers} within {idle:g} s "
            "(or no broker answered there)"
        )
    consumer = Consumer(
        {
            "bootstrap.servers": servers,
            "group.id": f"{PROG}-{CONSUME}",  # never joined: the partitions are assigned
            "enable.auto.commit": "false",
            "auto.offset.reset": "earliest",
        }
    )
    count = 0
    try:
        consumer.assign({TopicPartition(topic, p): 0 for p in range(partitions)})
        while max_messages is None or count < max_messages:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for message in consumer.poll_batch(10_000, min(left, 0.5)):
                value = message.value
                print("null" if value is None else value.decode("utf-8", "replace"), flush=True)
                count += 1
                deadline = time.monotonic() + idle
                if count == max_messages:
                    break
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()
    return count


def _wait_for_partitions(admin: Admin, topic: str, deadline: float) -> int | None:
    """How many partitions ``topic`` has, once it exists; None if it did not by ``deadline``."""
    while True:
        try:
            described = admin.describe_topic(topic)
            if described is not None and described.partitions:
                return described.partitions
        except ConnectError:
            pass  # the broker is not up yet, or did not answer in time
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def _prepare(args: argparse.Namespace) -> tuple[dict[str, str], list[ConnectorFile]]:
    """Read every file named on the command line and set up logging; nothing starts here."""
    path = args.worker_properties
    try:
        props = load_properties(path)
    except OSError as error:
        raise _Stop(f"cannot read worker properties {path}: {_reason(error)}", EXIT_USAGE) from None
    except ConfigError as error:
        raise _Stop(
            f"Invalid worker configuration in {path}: {error}", EXIT_STARTUP_FAILED
        ) from None
    try:
        configure_logging(args.log_level, _log_format(args.log_format, props), args.log_config)
    except ConfigError as error:
        raise _Stop(str(error), EXIT_USAGE) from None
    return props, _read_connector_files(args.connector_files)


def _log_format(flag: str | None, props: Mapping[str, str]) -> str:
    """The flag, else the worker key if it is a known format (else the worker's config
    validation reports it), else text."""
    if flag is not None:
        return flag
    configured = props.get(LOG_FORMAT_KEY, "").strip().lower()
    return configured if configured in LOG_FORMATS else "text"


def _read_connector_files(paths: Sequence[str]) -> list[ConnectorFile]:
    """Every connector file, parsed, before anything starts; the first bad one stops."""
    connectors: list[ConnectorFile] = []
    seen: dict[str, str] = {}
    for path in paths:
        try:
            connector = ConnectorFile.read(path)
        except OSError as error:
            raise _Stop(
                f"cannot read connector file {path}: {_reason(error)}", EXIT_USAGE
            ) from None
        except ConfigError as error:
            raise _Stop(
                f"Invalid connector file {path}: {error}", EXIT_CONNECTOR_FILE_FAILED
            ) from None
        if connector.name in seen:
            raise _Stop(
                f"Invalid connector file {path}: connector '{connector.name}' is also "
                f"defined in {seen[connector.name]}",
                EXIT_CONNECTOR_FILE_FAILED,
            )
        seen[connector.name] = path
        connectors.append(connector)
    return connectors


def _reason(error: OSError) -> str:
    """``No such file or directory`` rather than ``[Errno 2] No such file or directory: 'x'``."""
    return error.strerror or str(error)


class _StartInterrupted(BaseException):
    """SIGTERM or SIGINT during start-up (a BaseException, so no handler on the way swallows
    it; the start's own cleanup runs)."""


def _run(props: dict[str, str], connectors: list[ConnectorFile]) -> int:
    """Start the worker, run until SIGTERM or SIGINT, stop it."""
    # imported late: --help and --version stay fast
    from connect_lite.storage.base import StateFileError
    from connect_lite.worker_main import ConnectorFileError, start_worker

    # While the worker starts (it may wait long for Kafka), the first signal interrupts the
    # start: start_worker stops what it started. Any later signal (one during that clean-up,
    # or once the worker runs) only asks the loop below to stop.
    stop_requested = threading.Event()
    starting = [True]

    def on_signal(signum: int, _frame: object) -> None:
        if starting[0]:
            starting[0] = False
            raise _StartInterrupted(signal.Signals(signum).name)
        stop_requested.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    running = None
    try:
        running = start_worker(props, connectors)
        starting[0] = False
    except _StartInterrupted as interrupted:
        if running is not None:  # the signal came just after the start
            running.stop()
        log.info("Start-up interrupted by %s; stopped what had started", interrupted)
        return 0
    except ConfigError as error:
        print(f"Invalid worker configuration:\n{error}", file=sys.stderr)
        return EXIT_STARTUP_FAILED
    except ConnectorFileError as error:
        log.error("%s", Verbatim(error))
        return EXIT_CONNECTOR_FILE_FAILED
    except StateFileError as error:
        log.error("%s", Verbatim(error))  # names the file and what to do; no traceback
        return EXIT_STARTUP_FAILED
    except ConnectError as error:
        log.error("Stopping after startup failure: %s", Verbatim(error))
        return EXIT_STARTUP_FAILED
    except Exception as error:  # anything else is still one line, and exit 2, not a trace
        log.error("Stopping after startup failure: %s: %s", type(error).__name__, error)
        log.debug("The start-up failure", exc_info=True)
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
