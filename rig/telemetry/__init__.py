"""Telemetry: the rig's OTLP receiver, its own spans, and Prometheus metrics."""
