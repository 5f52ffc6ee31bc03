"""Confluent's HTTP sink connector (``io.confluent.connect.http.HttpSinkConnector``)."""
