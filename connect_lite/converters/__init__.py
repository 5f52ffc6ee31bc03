"""The built-in converters: JSON, String, ByteArray and the simple header converter."""
