"""One spec shape for measured runs: the helper's normalised spec, kept once.

Runs the GUI filed stored its form's arguments (and `overwrite`); runs `stripewise bench
--save` filed stored argparse names (`repeat`, `rate`, `buffered`, phases as `"a,b"`, sizes
as `"16M"`); both repeated the spec in `context["spec"]`. Every measured run now holds the
spec as `bench.start`'s reply echoes it (docs/protocol.md): every key, sizes in bytes, phases
as a list, defaults filled in; the context no longer repeats it. Imported runs keep their
tool's own spec (docs/importing.md). A value that cannot be read is kept as it was.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from stripewise.model.bench import SpecError, parse_size

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# bench.start's defaults (protocol 1), frozen here: a later default must not rewrite history
_DEFAULTS: dict[str, Any] = {
    "block_size": 2**20,
    "random_block_size": 4096,
    "direct": True,
    "phases": ["seq_write", "rewrite", "seq_read", "random_read"],
    "queue_depth": 1,
    "streams": 1,
    "repetitions": 1,
    "runtime_cap_s": 600.0,
    "sample_rate_hz": 2.0,
    "engine": "builtin",
}
_ORDER = ("target", "size", *_DEFAULTS)
_RENAMED = {
    "repeat": "repetitions",
    "rate": "sample_rate_hz",
    "size_bytes": "size",
    "block_bytes": "block_size",
    "random_block_bytes": "random_block_size",
}
_NOT_MEASURED = ("overwrite", "confirm_serial")  # typed to allow a write; not the workload
_SIZES = ("size", "block_size", "random_block_size")


def _bytes(value: Any) -> Any:
    """`16M` as bytes, as bench.start read it; a number, or text that is no size, as it is."""
    if isinstance(value, str):
        try:
            return parse_size(value)
        except SpecError:
            pass
    return value


def normalised(spec: Mapping[str, Any], target: str) -> dict[str, Any]:
    """The stored spec in bench.start's shape; keys it does not know are kept after them."""
    found = {_RENAMED.get(key, key): value for key, value in spec.items()}
    buffered = found.pop("buffered", None)
    if isinstance(buffered, bool) and "direct" not in found:
        found["direct"] = not buffered
    for key in _NOT_MEASURED:
        found.pop(key, None)
    if isinstance(found.get("phases"), str):
        found["phases"] = [p.strip() for p in found["phases"].split(",") if p.strip()]
    for key in _SIZES:
        if key in found:
            found[key] = _bytes(found[key])
    found.setdefault("target", target)
    shaped = {key: found.pop(key, _DEFAULTS.get(key)) for key in _ORDER}
    return shaped | found


runs = sa.table(
    "runs",
    sa.column("id", sa.Integer()),
    sa.column("target", sa.Text()),
    sa.column("source", sa.String()),
    sa.column("spec", sa.JSON()),
    sa.column("context", sa.JSON()),
)


def upgrade() -> None:
    if op.get_context().as_sql:
        return  # SQL rendered for a new database: there are no rows to convert
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(runs.c.id, runs.c.target, runs.c.spec, runs.c.context).where(
            runs.c.source == "measured"
        )
    ).all()
    for row in rows:
        if not isinstance(row.context, dict) or not isinstance(row.spec, dict):
            continue  # not what any release wrote: left as it is
        context = dict(row.context)
        repeated = context.pop("spec", None)
        spec = row.spec or (repeated if isinstance(repeated, dict) else {})
        bind.execute(
            runs.update()
            .where(runs.c.id == row.id)
            .values(spec=normalised(spec, row.target or ""), context=context)
        )


def downgrade() -> None:
    """The context repeats the spec again (its normalised shape reads as before)."""
    if op.get_context().as_sql:
        return
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(runs.c.id, runs.c.spec, runs.c.context).where(runs.c.source == "measured")
    ).all()
    for row in rows:
        if not isinstance(row.context, dict):
            continue
        context = row.context | {"spec": row.spec or {}}
        bind.execute(runs.update().where(runs.c.id == row.id).values(context=context))
