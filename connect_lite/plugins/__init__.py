"""Plugin discovery on plugin.path, isolated loading, and version selection."""
