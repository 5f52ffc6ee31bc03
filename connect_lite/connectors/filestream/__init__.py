"""Kafka's bundled FileStream connectors (connect-file), on connect-lite's plugin API.

The classes live in ``filestream.source`` and ``filestream.sink``; they are not re-exported
here so that each class is found under exactly one module path.
"""
