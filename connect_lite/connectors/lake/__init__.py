"""The lake sink: record values into Parquet, JSON, CSV or ORC files, exactly once.

``lake.sink.LakeSinkConnector`` (aliases ``LakeSinkConnector``, ``LakeSink``) takes
Confluent's S3/HDFS storage-sink keys (``config.py``). Its task implements
``put_dataframe``: every batch arrives as a Spark DataFrame and is written by Spark's own
writers; the task only uses that DataFrame's methods, its session, and Spark SQL strings.

**Files.** A file holds record values only: a struct value's fields are its columns,
another value is one column ``value`` (schemaless batches: the inferred ``value_struct``,
else the JSON text). It is named ``<topic>+<partition>+<first offset>+<last offset>.<ext>``
(offsets zero-padded) in the partitioner's directory under ``<topics.dir>/<topic>/``.

**Buffering.** Each put first collects the batch's small columns (offset, record time,
directory; ``spark_io.collect_rows``) and writes the batch as Parquet into the task's hidden
buffer area, ``<store>/_connect-lite/<connector>/task-<n>/staging/<put>/_tp=<t>+<p>/``
(readers of ``<topics.dir>`` never see it; dataset readers of the whole store skip
``_``-prefixed directories). The task keeps, per topic partition, the buffered offsets, times
and directories in memory (``rotation.BufferedPartition``) and decides there where files are
cut: ``flush.size`` records, ``rotate.interval.ms`` of record time, a schema change, or
``rotate.schedule.interval.ms`` of waiting (at a put or ``pre_commit``).

**Commit rounds** (``committer.py``). A round reads the buffered pieces of the partitions it
commits and writes exactly one file per (partition, segment, directory) to a temporary
directory with one Spark job per value type (a broadcast range join picks the segments'
rows, ``repartition`` + ``sortWithinPartitions`` put each file in one task, in offset
order). It then writes a journal of the temp -> final renames, atomically and durably: that
is the commit point. Rolling the journal forward renames, makes the renames durable, and
deletes the journal and the temporary directory; it is idempotent, so any task may do it.

**Recovery.** ``open`` rolls forward every journal of the connector (a revoked partition may
have been another task's), deletes this task's stale buffered pieces and temporary files, reads the
last offset in the names of each assigned partition's visible files, and seeks the
partition there (``context.offset``), ahead of the consumer group. Buffered data is never
recovered: it is re-read from Kafka, so it needs no fsync.

**Failures** (``errors.py``). Only failures that may pass raise ``RetriableError`` (I/O
errors of the store or the JVM, a cancelled Spark job, a JVM that died); the worker hands
the same records over again, and those below a partition's next offset are skipped. A
round whose journal write failed stays undecided until a later call sees whether the
journal (or a file it renamed) exists. Any other failure (a bad record, a bad setting, no
permission) unbuffers what the put buffered before it is raised: the worker skips the records
(``errors.tolerance=all``) or fails, and either way none of them is written. If records
buffered by earlier puts cannot be committed (at a schema change or a scheduled rotation),
their partitions are unbuffered and rewound (``context.offset``), and the records read again
are committed by the put that reads them, which fails if they do.

**Offsets.** Records are tracked under the topic partition they carry, so a put refuses
records of a partition the task was not assigned (a transform renamed the topic) before
buffering anything. ``pre_commit`` answers only for partitions opened (and recovered): per
partition the first buffered offset when records are buffered, else the offset the worker
passed: everything before it is in visible files or was never to be written (dropped by a
transform, a null value ignored, or a put that failed and was skipped). So after a crash at
any point, visible files hold each record once, and the records after them are read again.

**Stores** (``store.py``). ``file://`` uses ``os`` with fsync and ``os.rename``; other
schemes use the Hadoop FileSystem of Spark's JVM, reached through the DataFrame's session.
That store exists only once a batch brought the session, so on a Hadoop store the
recovery of ``open`` runs at the first ``put_dataframe`` (records already in visible files
are skipped, and the consumer is moved ahead if it is behind them). A batch of another
session (the JVM died and the worker started a new one) reopens the store in its JVM.
"""
