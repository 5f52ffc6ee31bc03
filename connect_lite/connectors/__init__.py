"""Built-in connectors, laid out like a plugin location: FileStream, the lake sink, the counter.

A class here is named by its module path inside this package, exactly as it would be in a
``plugin.path`` location (``counter.CounterSourceConnector``, ``lake.sink.LakeSinkConnector``),
unless it declares Kafka's name (FileStream: ``__connect_class_name__``, its module path
``filestream.source.FileStreamSourceConnector`` then an alias). So a copy of one of them in
``plugin.path`` is the same plugin at another (or the same) version, and KIP-891 chooses
between them. The modules import only ``connect_lite.api``, as a third-party plugin would.
"""
