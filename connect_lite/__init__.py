"""connect-lite: a Kafka Connect standalone worker in Python."""

__version__ = "0.1.0"
