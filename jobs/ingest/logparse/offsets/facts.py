"""What one offset line says, typed (`parse.parse` makes it, `offset_evidence` holds it).

Kinds and the fields each sets (every kind sets `topic` and `partition`, except
`unclean_leader_set`, which names the topic by id):

isr_shrink          the leader dropped replicas from the ISR: `previous_isr` -> `isr`; from
                    2.2 (KAFKA-7838) with the leader's `high_watermark` and
                    `log_end_offset`, and each dropped replica's end offset
                    (`replica_offsets`)
isr_expand          the leader added a replica: `previous_isr` -> `isr` (up to 2.7)
isr_updated         the ISR the leader stored: `isr`, and `partition_epoch` (the zkVersion
                    or partition epoch)
leader_start        the broker became leader at `leader_epoch`; `offset` is its log end
                    offset then (the epoch's start offset); `high_watermark` from 2.5
follower_start      the broker became a follower at `leader_epoch` (2.6+); `offset` and
                    `log_end_offset` are its log end offset then, before any truncation;
                    `leader` the leader it follows (3.3+)
log_loaded          the broker loaded the log at startup: its `log_end_offset` (and
                    `high_watermark` 2.6+)
truncate            the log was truncated to `offset` (Log / UnifiedLog `truncateTo`, the
                    fetcher's own line, the epoch cache cleared after truncating to an end
                    offset, a fetch-offset reset to the leader's end offset);
                    `log_end_offset` when the line states it
truncate_no_effect  a truncation to `offset` that removed nothing: `log_end_offset` is the
                    largest offset in the log + 1
truncation_refused  (1.0-2.0) the follower refused to truncate below its end offset
                    `log_end_offset` to the leader's `offset` (unclean election disabled)
fetch_reset_start   the follower restarted at the leader's start `offset`, its own end
                    offset `log_end_offset` being below it (nothing of it is kept)
epoch_assigned      the epoch cache's new entry: `leader_epoch` starts at `offset`
unclean_change      a KRaft controller applied an unclean partition change
                    (`PartitionRegistration.maybeLogPartitionChange`): `previous_isr` ->
                    `isr`, `previous_leader` -> `leader`, `leader_epoch`, `topic_id`
unclean_leader_set  a KRaft controller elected `leader` by an unclean election (3.6+):
                    `topic_id` and `partition` only
unclean_trigger     a KRaft controller started an unclean election (3.9+)
leader_recovering   the new leader found its partition RECOVERING (KIP-704, 3.2+): the
                    election that made it leader was unclean
"""

from __future__ import annotations

from typing import NamedTuple

Ints = tuple[int, ...]
# (broker id, end offset; None when the leader did not know it: `endOffset: unknown`)
ReplicaOffsets = tuple[tuple[int, int | None], ...]

KINDS = (
    "isr_shrink", "isr_expand", "isr_updated", "leader_start", "follower_start",
    "log_loaded", "truncate", "truncate_no_effect", "truncation_refused",
    "fetch_reset_start", "epoch_assigned", "unclean_change", "unclean_leader_set",
    "unclean_trigger", "leader_recovering",
)


class OffsetFact(NamedTuple):
    kind: str
    topic: str | None = None
    partition: int | None = None
    broker_id: int | None = None  # the broker the line names as its writer
    leader: int | None = None
    leader_epoch: int | None = None
    isr: Ints | None = None
    offset: int | None = None
    log_end_offset: int | None = None
    high_watermark: int | None = None
    previous_isr: Ints | None = None
    previous_leader: int | None = None
    partition_epoch: int | None = None
    topic_id: str | None = None
    replica_offsets: ReplicaOffsets | None = None
    format: str | None = None  # the catalogue entry that read it (`formats.LineFormat.name`)
