"""Built-in transformations, answering to Kafka's Java class names."""
