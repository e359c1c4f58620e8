"""Spark Structured Streaming jobs: sources, reducers from ``reducers``, sinks. Wiring only."""
