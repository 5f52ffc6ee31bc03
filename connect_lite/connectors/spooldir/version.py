"""The version every SpoolDir class reports."""

VERSION = "1.0.0"
