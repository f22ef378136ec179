"""`supportgate collect`: a HardwareManifest for the machine it runs on (docs/collect.md).

Public surface: `collect(options, probe)` (services.py), `render(manifest, fmt)` (render.py),
the `Probe` seam and the real `SystemProbe` (probe.py), the pure parsers (parsers.py),
`CollectOptions` and the choices the command offers (options.py), and the command's flags
(command.py, registered by supportgate/cli.py). Nothing is imported here: the command line
imports command.py for every `supportgate` command, and must not load the probes with it.
"""
