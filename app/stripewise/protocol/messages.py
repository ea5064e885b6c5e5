"""Every verb's arguments type, and the type its reply parses as: the clients look a reply's
type up by the verb they asked (`REPLY_TYPES`), and a test holds docs/protocol.md to these."""

from __future__ import annotations

from typing import Any

from stripewise.protocol.health import DiskHealthArgs
from stripewise.protocol.scaling import ScalingArgs
from stripewise.protocol.tuning import ApplyArgs, PersistArgs, RevertArgs, VerifyArgs
from stripewise.protocol.verbs import (
    ArrayCreateArgs,
    BenchCancelArgs,
    BenchStartArgs,
    CapabilitiesArgs,
    DropCachesArgs,
    HelloArgs,
    LocateArgs,
)

_ALL: tuple[Any, ...] = (
    HelloArgs,
    CapabilitiesArgs,
    DropCachesArgs,
    BenchStartArgs,
    BenchCancelArgs,
    ScalingArgs,
    LocateArgs,
    ArrayCreateArgs,
    DiskHealthArgs,
    ApplyArgs,
    VerifyArgs,
    RevertArgs,
    PersistArgs,
)
ARGS_TYPES: dict[str, type[Any]] = {kind.VERB: kind for kind in _ALL}
REPLY_TYPES: dict[str, type[Any]] = {verb: kind.REPLY for verb, kind in ARGS_TYPES.items()}
