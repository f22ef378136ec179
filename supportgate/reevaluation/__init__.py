"""Re-evaluation sweeps: every tracked manifest judged again under the current matrix and
policies, when either changes, a pool changes, a waiver expires, on a cron, or on request."""
