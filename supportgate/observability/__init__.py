"""Health checks, Prometheus metrics and the canonical per-request log event."""
