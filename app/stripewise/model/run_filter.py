"""Finding runs by what was in force when they ran: `read_ahead_kb=4096 filesystem=xfs`.

Each term is `key=value` (the key matches a dotted context key exactly or as its last part, so
`read_ahead_kb` finds `disks[sdb].tuning.read_ahead_kb`) or a bare word found in any key or
value. All terms must match.
"""

from __future__ import annotations

from collections.abc import Mapping

from stripewise.model.compare_context import flatten
from stripewise.model.run_context import RunContext

Term = tuple[str, str | None]


def parse_filter(text: str) -> list[Term]:
    terms: list[Term] = []
    for word in text.split():
        key, sep, value = word.partition("=")
        if sep and key:
            terms.append((key.lower(), value.lower()))
        elif word.strip("="):
            terms.append((word.strip("=").lower(), None))
    return terms


def _key_matches(flat_key: str, key: str) -> bool:
    flat = flat_key.lower()
    return flat == key or flat.endswith("." + key) or flat.endswith("]" + key)


def matches(context: RunContext, terms: list[Term], also: Mapping[str, str] | None = None) -> bool:
    """`also`: run fields outside the context (name, target, engine) a bare word may match;
    the context's keys are the stored ones, dotted (its JSON document, flattened)."""
    pairs = [(k.lower(), str(v).lower()) for k, v in flatten(context.to_json())]
    pairs += [(k.lower(), str(v).lower()) for k, v in (also or {}).items()]
    for key, value in terms:
        if value is None:
            if not any(key in k or key in v for k, v in pairs):
                return False
        elif not any(_key_matches(k, key) and v == value for k, v in pairs):
            return False
    return True
