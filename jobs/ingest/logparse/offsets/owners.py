"""Which broker wrote each file: a broker's `server.log` names it in many lines
(`[KafkaServer id=1] started`, `[Partition t-0 broker=1]`, `[ReplicaFetcher replicaId=1,
...]`, `[Broker id=1]`), but a log's own lines (`[UnifiedLog partition=t-0, dir=...]
Truncating to offset 1000`) do not. Such a line is the file's broker's when its file names
exactly one broker, else its folder's when the folder's files name exactly one (the ingest
reads one folder per broker), else nobody's: the evidence row keeps `broker_id` null rather
than guessing (a log several brokers wrote into, `docker compose logs` of a cluster).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def file_owners(named: Mapping[str, Iterable[int]]) -> dict[str, int]:
    """File -> its broker, from the brokers each file's lines name (`named`)."""
    own = {path: set(ids) for path, ids in named.items()}
    by_folder: dict[str, set[int]] = {}
    for path, ids in own.items():
        by_folder.setdefault(folder(path), set()).update(ids)
    out: dict[str, int] = {}
    for path, ids in own.items():
        if len(ids) == 1:
            out[path] = next(iter(ids))
        elif not ids:
            shared = by_folder.get(folder(path), set())
            if len(shared) == 1:
                out[path] = next(iter(shared))
    return out
