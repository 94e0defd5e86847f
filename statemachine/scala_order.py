"""The iteration order of Scala's hash-based collections of `Int` keys, as the Scala library
that a Kafka build runs on produces it.

Kafka's controller iterates such collections where it handles several brokers at once
(`ZkReplicaStateMachine.handleStateChanges` walks `replicas.groupBy(_.replica)`), and the
order can change an outcome: which ISR member is removed first, hence which one is kept as
the last member. The order is not specified by Scala; it follows from the library's code,
reproduced here for the two library lines Kafka shipped on:

* `"2.13"` (every 2.13.x; Kafka 3.x, and the default build of 2.6-2.8):
  `IterableOps.groupBy` always returns an `immutable.HashMap`, a CHAMP trie
  (`BitmapIndexedMapNode`). A key's hash is `Hashing.improve(key.##)`, split into 5-bit
  chunks from the low bits. In a node, the keys whose chunk no other key of the node shares
  are payload, stored by ascending chunk; keys that share a chunk go to a sub-node one level
  down. `foreach` / `foreachEntry` visit the payload first, then the sub-nodes by ascending
  chunk. The trie of an insert-only map depends on the key set alone, so the order does too.
* `"2.12"` (2.12.0-2.12.12, the library of every kafka_2.12 build of Kafka 2.0-2.7) and
  `"2.11"` (the same collection code): `TraversableLike.groupBy` fills a
  `mutable.HashMap`, then copies it in that map's order into `immutable.Map.newBuilder`,
  whose result is `Map1`..`Map4` (insertion order) for up to four keys and an
  `immutable.HashMap` (`HashTrieMap`) beyond. `mutable.HashMap` (`HashTable`) puts a key in
  bucket `rotateRight(byteswap32(key.##), 4) >>> (32 - log2(table size))` (seed 4: the
  16-bucket table's), prepends it to the bucket's chain, and iterates buckets from the
  last to the first. `HashTrieMap`
  keeps sub-tries and leaves together in ascending chunk order (same `improve`), so its
  order is the keys sorted by their chunks, lowest chunk first.

2.12.13 and later (kafka_2.12 builds of Kafka 2.8+) rewrote `groupBy` to keep the order of
first appearance for up to four keys: not emulated (see docs/core.md).

`tests/statemachine/test_scala_order.py` holds hand derivations from the library source and
orders produced by the real scala-library jars.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

SCALA_BINARIES = ("2.11", "2.12", "2.13")

_MASK = 0xFFFFFFFF
_CHUNK_BITS = 5  # HashMap trie: BitPartitionSize (2.13), `level + 5` (2.12)
_HASH_BITS = 32
# mutable.HashTable: initialSize 16, so seedvalue = bitCount(16 - 1) = 4.
_TABLE_SEED = 4
_INITIAL_TABLE = 16
# Map1..Map4 / Set1..Set4: the builders switch to a hash trie past four entries.
_SMALL_MAX = 4


def check_binary(scala_binary: str) -> None:
    if scala_binary not in SCALA_BINARIES:
        raise ValueError(f"unknown Scala binary version {scala_binary!r}: "
                         f"expected one of {', '.join(SCALA_BINARIES)}")


def improve(hcode: int) -> int:
    """`Hashing.improve` (2.13) = `HashMap.improve` (2.11/2.12): the trie's hash of `hcode`."""
    h = hcode & _MASK
    h = (h + (~(h << 9) & _MASK)) & _MASK
    h ^= h >> 14
    h = (h + (h << 4)) & _MASK
    return h ^ (h >> 10)


def chunks(key: int) -> tuple[int, ...]:
    """The 5-bit chunks of `improve(key)`, lowest first: the trie index at each level."""
    h = improve(key)
    return tuple((h >> shift) & 0x1F for shift in range(0, _HASH_BITS, _CHUNK_BITS))


def _distinct(keys: Iterable[int]) -> list[int]:
    return list(dict.fromkeys(keys))


def _champ_order(keys: list[int], level: int) -> list[int]:
    by_chunk: dict[int, list[int]] = {}
    for k in keys:
        by_chunk.setdefault(chunks(k)[level], []).append(k)
    payload = [ks[0] for _, ks in sorted(by_chunk.items()) if len(ks) == 1]
    for _, ks in sorted(by_chunk.items()):
        if len(ks) > 1:
            payload.extend(_champ_order(ks, level + 1))
    return payload


def immutable_hash_order(keys: Iterable[int], scala_binary: str) -> tuple[int, ...]:
    """Iteration order of an `immutable.HashMap` / `HashSet` holding `keys` (any number of
    them: a hash trie, never `Map1`..`Map4`). Distinct `Int` keys never collide: `improve`
    is a bijection, so two keys differ in some chunk."""
    check_binary(scala_binary)
    distinct = _distinct(keys)
    if scala_binary == "2.13":
        return tuple(_champ_order(distinct, 0))
    return tuple(sorted(distinct, key=chunks))


def byteswap32(v: int) -> int:
    """`scala.util.hashing.byteswap32`."""
    hc = (v * 0x9E3775CD) & _MASK
    hc = int.from_bytes(hc.to_bytes(4, "little"), "big")  # Integer.reverseBytes
    return (hc * 0x9E3775CD) & _MASK


def table_index(key: int, table_size: int) -> int:
    """`HashTable.index` (2.11/2.12) of `key` in a table of `table_size` buckets."""
    i = byteswap32(key & _MASK)
    rotated = ((i >> _TABLE_SEED) | (i << (_HASH_BITS - _TABLE_SEED))) & _MASK
    return rotated >> (_HASH_BITS - (table_size.bit_length() - 1))


def small_mutable_hash_map_order(keys: Iterable[int]) -> tuple[int, ...]:
    """Iteration order of a 2.11/2.12 `mutable.HashMap` into which at most four distinct
    `keys` were inserted in this order (a repeated key keeps its place): all the
    `groupBy` ever shows of it, since a fifth key sends the result through a hash trie.
    Four keys never reach the 16-bucket table's resize threshold (12)."""
    distinct = _distinct(keys)
    if len(distinct) > _SMALL_MAX:
        raise ValueError(f"{len(distinct)} keys: only up to {_SMALL_MAX} are emulated")
    table: list[list[int]] = [[] for _ in range(_INITIAL_TABLE)]
    for k in distinct:
        table[table_index(k, _INITIAL_TABLE)].insert(0, k)  # addEntry0 prepends to the chain
    # entriesIterator / foreachEntry start at the last bucket and walk down to bucket 0.
    return tuple(e for chain in reversed(table) for e in chain)


@lru_cache(maxsize=8192)
def group_by_order(keys: tuple[int, ...], scala_binary: str) -> tuple[int, ...]:
    """Order in which Kafka visits the groups of `seq.groupBy(f)` whose keys appear in `seq`
    in the order `keys` (repeats allowed)."""
    check_binary(scala_binary)
    if scala_binary == "2.13":
        return immutable_hash_order(keys, scala_binary)
    if len(set(keys)) > _SMALL_MAX:
        return immutable_hash_order(keys, scala_binary)
    # Map1..Map4 keep the order the builder received the keys in: the mutable map's.
    return small_mutable_hash_map_order(keys)


def to_set_order(elems: Sequence[int], scala_binary: str) -> tuple[int, ...]:
    """Iteration order of `elems.toSet` (or `Set(elems: _*)`): `Set1`..`Set4` in insertion
    order for up to four distinct elements, a hash trie beyond (both lines)."""
    check_binary(scala_binary)
    distinct = _distinct(elems)
    if len(distinct) <= _SMALL_MAX:
        return tuple(distinct)
    return immutable_hash_order(distinct, scala_binary)
