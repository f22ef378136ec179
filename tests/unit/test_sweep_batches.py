"""Sweeps and the impact analysis read the tracked manifests in batches of one size."""

from __future__ import annotations

import inspect

from supportgate.reevaluation import services
from supportgate.reevaluation.source import SWEEP_BATCH_SIZE, iter_tracked_batches


def test_one_batch_size_for_every_reader_of_the_tracked_manifests() -> None:
    default = inspect.signature(iter_tracked_batches).parameters["batch_size"].default
    assert default == services.SWEEP_BATCH_SIZE == SWEEP_BATCH_SIZE
