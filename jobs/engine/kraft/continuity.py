"""What a KRaft run's input says about the metadata log itself: offsets that never arrived,
and records delivered after the checkpoint had folded past them (pure).

The metadata log's offsets are consecutive: `KafkaRaftClient` appends every record (NoOps
and control records too) at the next offset, and the log is never compacted; it loses its
head only to retention, which deletes a segment once a snapshot holds its records
(`Snapshots`, `KafkaMetadataLog.deleteBeforeSnapshot`, `metadata.max.retention.ms`). So an
offset between the first the run needs and the highest it read that is in neither a row
nor a segment's range (`metadata_summary`: the NoOps are counted there, not written) is a
record the run did not see:

* below the end offset of a snapshot in the input: retention may have removed it after
  that snapshot; a rebuild from the snapshot sees its effect;
* at the log's start, with no snapshot read: the node's retention removed the head of the
  log after a snapshot that was not ingested, or the first segments were not delivered;
* otherwise: a batch that was never delivered.

Every one is a `missing_events` hole of the run (`run_summary.seq_gaps`, as offsets) and an
`offset_gap` finding that says which of the three it is. The checkpoint keeps the holes
(`ClusterState.missing`): a later night that delivers records inside one is late
(`late_events`): the fold cannot rewind, `--rebuild` replays the whole log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from jobs.engine.kraft.fold import BEFORE_CHECKPOINT, SKIPPED, ClusterRun
from jobs.engine.kraft.metadata_source import ClusterLog
from statemachine.rows import FindingRow

OFFSET_GAP = "offset_gap"  # the finding's kind
Range = tuple[int, int]  # inclusive


@dataclass(frozen=True)
class OffsetFacts:
    """One cluster's continuity in a run: the holes found, their findings, the late
    records, and the holes the checkpoint keeps after the run."""

    previous: int | None  # the highest offset the checkpoint had folded
    gaps: tuple[Range, ...] = ()
    findings: tuple[FindingRow, ...] = ()
    late: tuple[int, ...] = ()  # offsets of the late records read
    missing: tuple[Range, ...] = ()  # the checkpoint's holes after the run
    checked: bool = True  # False: no `metadata_summary`, holes could be NoOps
    top: int = -1  # the highest offset read, NoOps included (the next run starts after it)


def merged(ranges: Iterable[Range]) -> list[Range]:
    """Ranges sorted, touching and overlapping ones joined."""
    out: list[Range] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def holes(present: list[Range], first: int, last: int) -> list[Range]:
    """The offsets of [first, last] in none of `present` (merged)."""
    out, at = [], first
    for a, b in present:
        if b < at:
            continue
        if a > last:
            break
        if a > at:
            out.append((at, a - 1))
        at = max(at, b + 1)
    if at <= last:
        out.append((at, last))
    return out


def _covered(ranges: Iterable[Range], offset: int) -> bool:
    return any(a <= offset <= b for a, b in ranges)


def _why(gap: Range, log: ClusterLog, resumed: bool) -> str:
    a, b = gap
    text = f"offset {a}" if a == b else f"offsets {a}-{b}"
    covering = sorted((end, s) for s, end in log.snapshot_ends.items() if end > b)
    if covering:
        end, snapshot = covering[0]
        remedy = ("the checkpoint folded the log before them and cannot take a snapshot "
                  "in: replay into a new checkpoint from the snapshot with --rebuild"
                  if resumed else "the replay started from a later snapshot")
        return (f"{text} are not in the log, and snapshot {snapshot} (end offset {end}) "
                f"holds them: the node's retention may have removed them after that "
                f"snapshot; {remedy}")
    if a == 0 and not resumed and not log.snapshot_ends:
        return (f"{text} are not in the log and no snapshot was read: the node's retention "
                "removed the head of the log after a snapshot (ingest the node's latest "
                "*.checkpoint with the segments), or its first segments were not delivered")
    return (f"{text} never arrived (metadata-log offsets are consecutive): a batch was not "
            "delivered; find the segment that holds them, then --rebuild")


def offset_facts(log: ClusterLog, segments: list[Range] | None, through: int | None,
                 missing_before: Iterable[Range] = ()) -> OffsetFacts:
    """The continuity of one cluster's input (module docstring). `segments`: the offsets
    each segment held (None: unknown, no check); `through`: the checkpoint's highest
    folded offset (None: a run from the log's start or its latest snapshot)."""
    earlier = merged(missing_before)
    # Of the records an incremental run skips as folded before (`fold._start`).
    late = tuple(r.offset for r in log.records[log.from_snapshot:]
                 if through is not None and r.offset is not None and r.offset <= through
                 and _covered(earlier, r.offset))
    if segments is None:
        return OffsetFacts(through, late=late, missing=tuple(earlier), checked=False)
    present = merged([*segments, *((o, o) for o in log.log_offsets)])
    if through is not None:
        first = through + 1
    elif log.snapshot is not None:
        first = log.snapshot_ends[log.snapshot]
    else:
        first = 0
    last = max((b for _, b in present), default=-1)
    gaps = holes(present, first, last)
    findings = tuple(FindingRow(a, None, None, None, None, OFFSET_GAP,
                                _why((a, b), log, through is not None), None)
                     for a, b in gaps)
    return OffsetFacts(through, tuple(gaps), findings, late,
                       tuple(merged([*earlier, *gaps])), top=last)


def with_offset_facts(run: ClusterRun, facts: OffsetFacts) -> None:
    """The run's summary, findings and saved state with its continuity: the holes as
    `seq_gaps`, the late records counted `rows_late` (no longer `skipped:before_checkpoint`:
    they were never folded)."""
    late = (min(facts.late), max(facts.late)) if facts.late else None
    run.facts = replace(run.facts, previous_seq_max=facts.previous, gaps=facts.gaps,
                        late=late)
    if facts.late:
        key = f"{SKIPPED}{BEFORE_CHECKPOINT}"
        for counter in (run.skipped, run.counts.findings_by_kind):
            counter[key] -= len(facts.late)
            if counter[key] <= 0:
                del counter[key]
        run.counts.rows_late = len(facts.late)
    run.outputs.findings.extend(facts.findings)
    run.counts.findings_by_kind.update(f.kind for f in facts.findings)
    if run.state is not None:
        run.state.missing = list(facts.missing)
        # A night's trailing NoOps were read: the next night starts after them.
        run.state.through = max(run.state.through, facts.top)
