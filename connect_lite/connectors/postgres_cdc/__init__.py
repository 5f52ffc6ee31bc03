"""Change data capture from PostgreSQL with Debezium's configs, events and offsets."""
