"""The version every lake sink class reports."""

VERSION = "1.0.0"
