"""Status lines as Kafka Connect's Jetty writes them: the code and Jetty's reason phrase.

Jetty 12 (Kafka 4) writes the phrase of its own table (``HttpStatus.Code``) whatever the
application set, and the code again for a code its table lacks. Clients quote the phrase in
their error messages, so every answer carries Jetty's: the app's (werkzeug's phrases are upper
case, ``404 NOT FOUND``) and the server's own (cheroot's ``413 Request Entity Too Large``,
``500 Internal Server Error``). ``rest/server.py`` applies :func:`status_line` to both.
"""

from __future__ import annotations

REASON_PHRASES: dict[int, str] = {
    100: "Continue",
    101: "Switching Protocols",
    102: "Processing",
    103: "Early Hints",
    200: "OK",
    201: "Created",
    202: "Accepted",
    203: "Non Authoritative Information",
    204: "No Content",
    205: "Reset Content",
    206: "Partial Content",
    207: "Multi-Status",
    300: "Multiple Choices",
    301: "Moved Permanently",
    302: "Found",
    303: "See Other",
    304: "Not Modified",
    305: "Use Proxy",
    307: "Temporary Redirect",
    308: "Permanent Redirect",
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    407: "Proxy Authentication Required",
    408: "Request Timeout",
    409: "Conflict",
    410: "Gone",
    411: "Length Required",
    412: "Precondition Failed",
    413: "Payload Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    416: "Range Not Satisfiable",
    417: "Expectation Failed",
    418: "I'm a Teapot",
    420: "Enhance your Calm",
    421: "Misdirected Request",
    422: "Unprocessable Entity",
    423: "Locked",
    424: "Failed Dependency",
    426: "Upgrade Required",
    428: "Precondition Required",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    451: "Unavailable for Legal Reason",
    500: "Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    505: "HTTP Version Not Supported",
    507: "Insufficient Storage",
    508: "Loop Detected",
    510: "Not Extended",
    511: "Network Authentication Required",
}
"""Jetty 12's reason phrases (``org.eclipse.jetty.http.HttpStatus.Code``), by code. Not always
RFC 9110's: 500 is ``Server Error``, 413 ``Payload Too Large``."""


def reason_phrase(code: int) -> str:
    """Jetty's phrase for ``code``; the code itself for one Jetty has no phrase for."""
    return REASON_PHRASES.get(code, str(code))


def status_line(status: str) -> str:
    """A WSGI status (``404 NOT FOUND``, or a bare ``404``) as Jetty writes it: ``404 Not
    Found``. A status that does not start with a three-digit code is left as it is."""
    code = status[:3]
    if len(code) < 3 or not code.isdigit() or status[3:4] not in ("", " "):
        return status
    return f"{code} {reason_phrase(int(code))}"


__all__ = ["REASON_PHRASES", "reason_phrase", "status_line"]
