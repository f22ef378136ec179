"""The audit history: queries over the decisions, and verification of the log they come from."""
