"""`supportgate collect`: a HardwareManifest for the machine it runs on (docs/collect.md).

Public surface: `collect(options, probe)` (services.py), `render(manifest, fmt)` (render.py),
the `Probe` seam and the real `SystemProbe` (probe.py), the pure parsers (parsers.py) and the
command's flags (command.py, registered by supportgate/cli.py).
"""

from supportgate.collect.probe import Output, Probe, SystemProbe
from supportgate.collect.render import FORMATS, render
from supportgate.collect.services import CollectError, CollectOptions, Missing, collect

__all__ = [
    "FORMATS",
    "CollectError",
    "CollectOptions",
    "Missing",
    "Output",
    "Probe",
    "SystemProbe",
    "collect",
    "render",
]
