"""Epoch microseconds: one reading of aware and naive datetimes, exact to the microsecond."""

import random
from datetime import UTC, datetime, timedelta, timezone

from jobs.common.instants import EPOCH, instant, micros


def test_an_aware_time_is_read_as_it_says():
    assert micros(datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=UTC)) == 1_000_005
    plus_two = timezone(timedelta(hours=2))
    assert micros(datetime(1970, 1, 1, 2, 0, 0, tzinfo=plus_two)) == 0


def test_a_naive_time_is_local_time_as_pyspark_hands_it_over():
    naive = datetime(2026, 7, 1, 12, 30, 0, 250_001)
    assert micros(naive) == micros(naive.astimezone())
    assert micros(naive) == round(naive.timestamp() * 1_000_000)


def test_microseconds_round_trip_exactly():
    rng = random.Random(7)
    for _ in range(10_000):
        us = rng.randrange(0, 4_000_000_000_000_000)
        assert micros(instant(us)) == us
    assert instant(0) == EPOCH
    assert instant(1).tzinfo is UTC
