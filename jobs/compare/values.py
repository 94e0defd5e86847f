"""Values of the rows the comparison reads, whichever way they were read: Arrow's
`to_pylist`, pandas, or a NamedTuple's `_asdict()` (tests, small logs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# A row of a table as a mapping of column -> value; the values are whatever the reader
# produced, so they are normalised with `value` before they are compared.
Row = Mapping[str, Any]


def value(x: Any) -> Any:
    """Normalise a value read back from Arrow/pandas (arrays -> tuples, NaN -> None)."""
    if x is None:
        return None
    if isinstance(x, float) and x != x:
        return None
    if hasattr(x, "tolist") and not isinstance(x, (int, str)):
        x = x.tolist()
    if isinstance(x, list):
        return tuple(int(i) for i in x)
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and x.is_integer():
        return int(x)  # a nullable int column read through pandas
    return x


def render(x: object) -> str | None:
    """A value as the comparison writes it: lists as `[1,2]`, the rest with `str`."""
    if x is None:
        return None
    if isinstance(x, tuple):
        return "[" + ",".join(str(i) for i in x) + "]"
    return str(x)
