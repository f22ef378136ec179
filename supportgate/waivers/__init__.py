"""Waivers: a deny rule that does not reject one manifest until the waiver expires."""
