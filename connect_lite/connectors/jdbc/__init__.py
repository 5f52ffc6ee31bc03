"""JDBC connectors with Confluent's configs: the sink
(``io.confluent.connect.jdbc.JdbcSinkConnector``) writes each batch from the Spark executors
into PostgreSQL or SQLite."""
