"""The version every FileStream class reports.

1.0.0, as when they shipped as the plugin location ``plugins/file-1.0.0``: a connector pinned
with ``connector.plugin.version=1.0.0`` keeps working now that they are built in.
"""

VERSION = "1.0.0"
