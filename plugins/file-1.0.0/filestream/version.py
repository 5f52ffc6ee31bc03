"""The version every class of this plugin location reports."""

VERSION = "1.0.0"
