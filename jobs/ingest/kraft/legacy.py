"""Layouts a record had before its schema changed at the same version.

`FeatureLevelRecord` version 0 carried `MinFeatureLevel` and `MaxFeatureLevel` (two int16)
in 3.0 to 3.2 (`metadata/src/main/resources/common/metadata/FeatureLevelRecord.json` at
3.0.0), then one `FeatureLevel` from 3.3.0 on, still as version 0. A record that the current
layout leaves bytes of is read with the old one.

Two other records changed the same way, but no release wrote the old layout into a KRaft
log: `UserScramCredentialRecord` (a list of credentials up to 3.4; SCRAM in KRaft came in
3.5, KIP-554) and `DelegationTokenRecord` (no `Requester` up to 3.5; delegation tokens in
KRaft came in 3.6, KIP-900). `ProducerIdsRecord`'s `ProducerIdsEnd` (3.0-3.1) is the same
int64 as the later `NextProducerId`: only the name changed, and the later one is kept.
"""

from __future__ import annotations

from jobs.ingest.kraft.schema import Message, message

FEATURE_LEVEL_RECORD_3_0 = message(
    12, "FeatureLevelRecord", "0",
    "name string 0+",
    "minFeatureLevel int16 0+",
    "maxFeatureLevel int16 0+",
)

# Api key -> the older layouts to try when the current one does not fit.
LEGACY: dict[int, tuple[Message, ...]] = {12: (FEATURE_LEVEL_RECORD_3_0,)}
