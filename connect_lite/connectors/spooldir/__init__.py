"""The SpoolDir sources: files dropped into a directory, into a topic, read by Spark.

``spooldir.source.SpoolDirCsvSourceConnector``, ``...JsonSourceConnector`` and
``...LineDelimitedSourceConnector`` answer to jcustenborder's class names
(``com.github.jcustenborder.kafka.connect.spooldir.SpoolDirCsvSourceConnector`` ...) and
their short names; ``SpoolDirParquetSourceConnector`` is connect-lite's own. They take
jcustenborder's keys (``config.py``) and give his records: the same key and value structs
(``key.schema``, ``value.schema`` in connect-utils' JSON), source partition
``{"fileName": <name>}``, source offset ``{"offset": <n>}`` and the eight ``file.*``
headers.

The task implements ``poll_dataframe``. Each file is read by Spark's own readers
(``reader.py``), parsed once and cached in the executors; each poll hands over the next
``batch.size`` records of up to as many files as Spark has cores, and the executors
convert and produce them. A file is moved, deleted or kept (``cleanup.policy``) once the
offset of its last record is committed, so a restart resumes after the last committed
record, and a file that does not parse goes to ``error.path`` before any record of it is
produced.
"""
