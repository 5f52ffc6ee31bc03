"""A tiny connector package: its plugins are found through a connect_lite.plugins entry point."""
