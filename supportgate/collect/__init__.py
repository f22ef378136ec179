"""`supportgate collect`: a HardwareManifest for the machine it runs on (docs/collect.md).
Nothing is imported here: every `supportgate` command imports command.py, not the probes."""
