"""What the application's lifespan does besides starting and stopping the Runtime."""

from __future__ import annotations

import gc

from tests.api import running_api


def test_start_up_objects_are_frozen_out_of_the_collector_until_the_stop(
    migrated_db_url: str,
) -> None:
    with running_api(migrated_db_url):
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
