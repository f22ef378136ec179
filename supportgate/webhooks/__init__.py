"""Webhooks: subscriptions, the alert outbox, signing and the dispatcher (docs/webhooks.md)."""
