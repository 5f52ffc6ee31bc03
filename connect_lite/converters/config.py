"""The configuration every converter shares (Kafka's ConverterConfig)."""

from __future__ import annotations

from connect_lite.api.config import ConfigDef, Importance, Type, ValidString

CONVERTER_TYPE = "converter.type"


def converter_config_def() -> ConfigDef:
    """A new ConfigDef holding ``converter.type`` (key, value or header)."""
    return ConfigDef().define(
        CONVERTER_TYPE,
        Type.STRING,
        "value",
        ValidString.in_("key", "value", "header"),
        Importance.LOW,
        "How this converter will be used.",
    )


__all__ = ["CONVERTER_TYPE", "converter_config_def"]
