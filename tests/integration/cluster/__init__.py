"""Tests on a real Spark standalone cluster (tests/integration/conftest.py: spark_standalone)."""
