"""The scheme of a path the user gives, as Hadoop reads it: `""` for a plain local path,
`file` for the local file system, `hdfs`, `s3a`, ... for the others."""

from __future__ import annotations

import re


def scheme_of(path: str) -> str:
    """The URI scheme of a Hadoop path (`""` for a plain local path)."""
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", path)
    if match is None or len(match.group(1)) == 1:  # `C:` is a drive, not a scheme
        return ""
    return match.group(1).lower()
