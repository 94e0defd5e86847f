"""Pickling of the core's dataclasses that travel to Spark's workers in the group function's
closure (the timelines and the config): through `__init__`, so that the compiled and the
interpreted classes read each other's pickles. And `mypyc_attr`, for a compiled class that
interpreted code extends (mypyc refuses "interpreted classes cannot inherit from compiled"
unless the class allows it)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

# Re-exported for the compiled classes that interpreted code extends (mypyc's own decorator;
# a no-op at run time, so the sources need nothing but the small package).
from mypy_extensions import mypyc_attr as mypyc_attr


def rebuilt(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """A dataclass's `__reduce__`: its class called with its init fields. Compiled by mypyc,
    a frozen one is otherwise unpickled attribute by attribute, which its frozen
    `__setattr__` refuses, and a slotted one's pickled state is not the interpreted class's;
    rebuilt through `__init__`, it pickles the same compiled or not, and from one to the
    other (a driver and its workers may differ: spark-submit ships the sources)."""
    return type(obj), tuple(getattr(obj, f.name) for f in fields(obj) if f.init)
