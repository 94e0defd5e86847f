"""Every command's driver gives decoded pages back (`jobs.common.arrow_memory`): jemalloc,
else the system allocator, unless the user chose a pool."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jobs.common.arrow_memory import ENV, release_decoded_pages
from jobs.common.command import run_job


@pytest.fixture
def restored_pool() -> object:
    before = pa.default_memory_pool()
    yield before
    pa.set_memory_pool(before)


def test_a_command_runs_on_an_allocator_that_releases(restored_pool: object,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    seen: list[str] = []

    def body(_argv: list[str], _spark: object) -> int:
        seen.append(pa.default_memory_pool().backend_name)
        return 0

    assert run_job("probe", [], body) == 0
    assert seen and seen[0] in ("jemalloc", "system")


def test_the_users_pool_wins(restored_pool: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "mimalloc")
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    assert release_decoded_pages() == "mimalloc"
