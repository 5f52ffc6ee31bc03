"""Log output of both processes: the connector context of a line, logger levels (/admin/loggers),
Kafka's layout, redaction.
"""
