"""Sweeps and the impact analysis read the tracked manifests in batches of one size."""

from __future__ import annotations

import inspect

import pytest

from supportgate.impact import services as impact
from supportgate.reevaluation import services as sweeps
from supportgate.reevaluation import source
from supportgate.reevaluation.source import iter_tracked_batches

pytestmark = pytest.mark.fast


def test_one_batch_size_for_every_reader_of_the_tracked_manifests() -> None:
    default = inspect.signature(iter_tracked_batches).parameters["batch_size"].default
    sizes = {
        value
        for module in (source, sweeps, impact)
        for name, value in vars(module).items()
        if name.endswith("BATCH_SIZE")
    }
    assert sizes == {default}
