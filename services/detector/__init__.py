"""The fraudstream detector: a PySpark Structured Streaming job around the pure `fraudstream_rules` core."""
