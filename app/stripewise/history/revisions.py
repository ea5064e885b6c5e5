"""Schema revisions this version knows, kept in step with migrations/versions by a test.

A module of its own so that readers which never migrate need neither Alembic nor SQLAlchemy.
"""

from __future__ import annotations

HEAD_REVISION = "0013"
KNOWN_REVISIONS = (
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0006",
    "0007",
    "0008",
    "0009",
    "0010",
    "0011",
    "0012",
    "0013",
)
