"""Webhooks: subscriptions, the alert outbox, signing and the dispatcher (docs/webhooks.md)."""

from __future__ import annotations

from .outbox import enqueue_alert_deliveries

__all__ = ["enqueue_alert_deliveries"]
