"""Verdict-change alerts: written with the decision that changed the verdict, listed by
GET /v1/alerts, and handed to the webhook outbox in the same transaction."""
