"""Metrics, tracing and the log format."""
