"""Pickling of the core's frozen dataclasses (the timelines and the config travel to Spark's
workers in the group function's closure)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any


def rebuilt(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """A frozen dataclass's `__reduce__`: its class called with its init fields. Compiled by
    mypyc, such a class is otherwise unpickled attribute by attribute, which its frozen
    `__setattr__` refuses; rebuilt through `__init__`, it pickles the same compiled or not,
    and from one to the other (a driver and its workers may differ)."""
    return type(obj), tuple(getattr(obj, f.name) for f in fields(obj) if f.init)
