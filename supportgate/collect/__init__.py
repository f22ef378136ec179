"""`supportgate collect`: a HardwareManifest for the machine it runs on (docs/collect.md).

Nothing is imported here: the command line imports command.py for every `supportgate`
command, and must not load the probes with it.
"""
