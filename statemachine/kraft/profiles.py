"""KRaft release profiles: what the controller of a release line writes, where the lines
differ.

The image folds every line's records alike (`PartitionRegistration.merge` did not change;
`statemachine.kraft.image`), so the switches here do not change how a record is merged:
they say which records the line's controller can write, and the fold reports a record
that its profile's controller would not have written (`record_outside_profile`: the log
comes from another release line, or a cluster on an unreleased metadata version), the
way the ZooKeeper fold's profiles are chosen by `--kafka-version`. The same switches are
the election rules a what-if on a KRaft log will re-execute.

| profile | lines | `isr_shrink_bumps_leader_epoch` | `elr` |
|---|---|---|---|
| `3.3` | 3.3-3.5 | yes | no |
| `3.6` | 3.6-3.9 | no (at the line's metadata versions) | no |
| `4.0` | 4.0 and later | no | possible, off by default |

* `isr_shrink_bumps_leader_epoch`: an ISR shrink names the current leader, so the leader
  epoch moves (`PartitionChangeBuilder.triggerLeaderEpochBumpIfNeeded`: 3.5.0
  `PartitionChangeBuilder.java:264-271` on every ISR shrink; 3.6.0 `:289-301` only while
  `MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink`, below 3.6-IV0, 3.6.0
  `MetadataVersion.java:274-276`, or during a ZooKeeper migration). A 3.3-3.5 log has no
  ISR shrink without a leader.
* `elr` (KIP-966, eligible leader replicas): `ReplicationControlManager.isElrEnabled` needs
  the controller's setting (off by default, trunk of 2024-10
  `ReplicationControlManager.java:167`) and `MetadataVersion.isElrSupported`: 3.8-IV0 at
  3.7.0 (`MetadataVersion.java:325-327`), 4.0-IV0 at 3.9.0 (`:347-349`), metadata
  versions none of those lines ships as production (3.7.0 `LATEST_PRODUCTION =
  IBP_3_7_IV4`, `:231`; 3.9.0 `IBP_3_9_IV0`, `:247`); 4.0-IV1 on the trunk of 2024-10
  (`:353-355`), the 4.0 line. A 3.x log has no ELR list in a partition record and no
  `ClearElrRecord`.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class KraftProfile:
    name: str
    isr_shrink_bumps_leader_epoch: bool
    elr: bool


PROFILES: Final = {
    "3.3": KraftProfile("3.3", isr_shrink_bumps_leader_epoch=True, elr=False),
    "3.6": KraftProfile("3.6", isr_shrink_bumps_leader_epoch=False, elr=False),
    "4.0": KraftProfile("4.0", isr_shrink_bumps_leader_epoch=False, elr=True),
}
DEFAULT_KRAFT_VERSION: Final = "3.7"


def kraft_profile_for(version: str) -> KraftProfile:
    """The profile of a release line ("X.Y" or "X.Y.Z"); KRaft profiles start at 3.3,
    the first line with KRaft production-ready (KIP-833)."""
    m = _VERSION.fullmatch(version.strip())
    if m is None:
        raise ValueError(f"malformed Kafka version {version!r}: expected X.Y, e.g. 3.7")
    major, minor = int(m.group(1)), int(m.group(2))
    if (major, minor) < (3, 3):
        raise ValueError(f"Kafka {version}: KRaft profiles cover 3.3 and later")
    if major >= 4:
        return PROFILES["4.0"]
    return PROFILES["3.3" if minor < 6 else "3.6"]
