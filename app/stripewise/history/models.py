"""SQLAlchemy tables of the run history.

The store reads and writes these through Core statements and hands out `stripewise.model`
dataclasses, so nothing outside `history` ever holds an ORM object. The migrations in
`migrations/versions` are written by hand to match; a test compares them with this module.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TextClause,
    TypeDecorator,
    false,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from stripewise.history.rows import as_utc

# Named constraints let SQLite batch migrations find and alter them later.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

RUN_STATUSES = ("running", "complete", "cancelled", "failed", "aborted")
RUN_SOURCES = ("measured", "imported")
# a listed run is in no trash and no group run's host run; index name -> its leading columns
_LISTED = text("deleted_at IS NULL AND parent_run_id IS NULL")
_RUNNING = text("status = 'running'")
_TRASHED = text("deleted_at IS NOT NULL")
_HOST_RUNS = text("parent_run_id IS NOT NULL")  # a group run's host runs (0010)
# (a target and an engine lowered: the filters ignore case, history.run_pages)
LISTED_INDEXES: dict[str, tuple[str | TextClause, ...]] = {
    "ix_runs_listed": (),
    "ix_runs_host_listed": ("host_id",),
    "ix_runs_target_listed": (text("lower(target)"),),
    "ix_runs_engine_listed": (text("lower(engine)"),),
}


def _in_list(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class UTCDateTime(TypeDecorator[datetime]):
    """Stores aware datetimes as UTC; SQLite hands them back naive, so they are made aware."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value.isoformat()}: pass a timezone-aware one")
        value = value.astimezone(UTC)
        # SQLite keeps the text as given; dropping the offset keeps its sort order right.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


def utc_now() -> datetime:
    return datetime.now(UTC)


# A JSON column's document as the database hands it back: the one place these columns are
# untyped. Each is read into its value type at once (BenchSpec, RunContext, Headline, the
# experiment's design and result) by the codec that wrote it.
JsonDocument = dict[str, Any]


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 - SQLAlchemy reads this class attribute
        datetime: UTCDateTime(),
        JsonDocument: JSON(),
        list[str]: JSON(),
    }


class Host(Base):
    __tablename__ = "hosts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hostname: Mapped[str] = mapped_column(String(255))
    machine_id: Mapped[str] = mapped_column(String(255), unique=True)
    kernel: Mapped[str] = mapped_column(String(255), default="")
    cpu_model: Mapped[str] = mapped_column(String(255), default="")
    cpu_count: Mapped[int] = mapped_column(Integer, default=0)
    ram_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    first_seen: Mapped[datetime] = mapped_column(default=utc_now)
    last_seen: Mapped[datetime] = mapped_column(default=utc_now)


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (
        CheckConstraint(_in_list("status", RUN_STATUSES), name="status"),
        CheckConstraint(_in_list("source", RUN_SOURCES), name="source"),
        Index("ix_runs_started_at", "started_at"),
        Index(
            "ix_runs_parent_run_id",
            "parent_run_id",
            sqlite_where=_HOST_RUNS,
            postgresql_where=_HOST_RUNS,
        ),
        Index(
            "ix_runs_trashed", "started_at", "id", sqlite_where=_TRASHED, postgresql_where=_TRASHED
        ),
        # the listing's keyset order and its filters (migration 0013, history.run_pages)
        *(
            Index(
                name, *leading, "started_at", "id", sqlite_where=_LISTED, postgresql_where=_LISTED
            )
            for name, leading in LISTED_INDEXES.items()
        ),
        Index("ix_runs_running", "host_id", sqlite_where=_RUNNING, postgresql_where=_RUNNING),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id"))
    name: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16))
    engine: Mapped[str] = mapped_column(String(64))
    engine_version: Mapped[str] = mapped_column(String(64), default="")
    target: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    spec: Mapped[JsonDocument]
    context: Mapped[JsonDocument]
    tags: Mapped[list[str]] = mapped_column(default=list)
    notes: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(String(16), default="measured")
    baseline: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    deleted_at: Mapped[datetime | None]  # in the trash since; NULL for a listed run
    headline: Mapped[JsonDocument | None]  # model.run_headline; NULL until first listed
    # a group run's host runs point at it (migration 0010); NULL for every other run
    parent_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), default=None
    )
    host_label: Mapped[str | None] = mapped_column(String(255), default=None)


class RunTag(Base):
    """One tag of a run, copied from `runs.tags` by triggers (migration 0013): a tag filter
    reads its runs through `ix_run_tags_tag` instead of every run's JSON."""

    __tablename__ = "run_tags"
    __table_args__ = (Index("ix_run_tags_tag", text("lower(tag)"), "run_id"),)

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(String(255), primary_key=True)


class SampleBlock(Base):
    """Consecutive samples of one run, phase and repetition, packed column-wise
    (history.sample_blocks; migration 0011 replaced one row per sample)."""

    __tablename__ = "sample_blocks"
    __table_args__ = (Index("ix_sample_blocks_run_id_first_seq", "run_id", "first_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    phase: Mapped[str] = mapped_column(String(64))
    repetition: Mapped[int] = mapped_column(Integer)
    # the seqs the block holds lie in [first_seq, last_seq]: a re-sent sample is looked
    # for only in the blocks whose range covers it
    first_seq: Mapped[int] = mapped_column(Integer)
    last_seq: Mapped[int] = mapped_column(Integer)
    sample_count: Mapped[int] = mapped_column(Integer)
    payload: Mapped[bytes] = mapped_column(LargeBinary)


class Result(Base):
    __tablename__ = "results"
    __table_args__ = (Index("ix_results_run_id", "run_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    phase: Mapped[str] = mapped_column(String(64))
    metric: Mapped[str] = mapped_column(String(64))
    unit: Mapped[str] = mapped_column(String(32))
    value: Mapped[float | None] = mapped_column(Float)
    min_value: Mapped[float | None] = mapped_column(Float)
    max_value: Mapped[float | None] = mapped_column(Float)
    repetitions: Mapped[int] = mapped_column(Integer, default=1)
    # each repetition's figure (the verdict's evidence) and the guards it tripped; NULL: none
    passes: Mapped[list[float] | None] = mapped_column(JSON)
    flags: Mapped[list[str] | None] = mapped_column(JSON)
    source_unit: Mapped[str | None] = mapped_column(String(32))  # an import's own unit


class SlotLabelRow(Base):
    """Keyed by host (machine id) and slot (controller + port), not by kernel disk name."""

    __tablename__ = "slot_labels"

    host_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    slot_key: Mapped[str] = mapped_column(String(512), primary_key=True)
    label: Mapped[str] = mapped_column(String(255))
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)


class HostGroupRow(Base):
    """A named group of benchmark hosts (stripewise.model.host_group); names are unique."""

    __tablename__ = "host_groups"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class HostGroupHostRow(Base):
    """One host of a group, at its place in the group's order."""

    __tablename__ = "host_group_hosts"
    __table_args__ = (CheckConstraint("kind IN ('fio', 'ssh')", name="kind"),)

    group_id: Mapped[int] = mapped_column(
        ForeignKey("host_groups.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    host: Mapped[str] = mapped_column(String(255))
    port: Mapped[int] = mapped_column(Integer)
    user: Mapped[str | None] = mapped_column(String(32))


class ExperimentRow(Base):
    """A sweep of one or two parameters (history.experiments, migration 0012): its points are
    runs tagged `experiment:<id>`; the design and the result are protocol.experiment's JSON."""

    __tablename__ = "experiments"
    __table_args__ = (
        CheckConstraint(_in_list("status", RUN_STATUSES), name="status"),
        Index("ix_experiments_created_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id"))
    name: Mapped[str] = mapped_column(String(255))
    target: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(16))
    parameters: Mapped[str] = mapped_column(String(255))  # the varied names, comma-joined
    design: Mapped[JsonDocument]
    result: Mapped[JsonDocument | None]  # NULL until it ends
    deleted_at: Mapped[datetime | None]  # in the trash since, with its runs


hosts: Table = Base.metadata.tables["hosts"]
runs: Table = Base.metadata.tables["runs"]
run_tags: Table = Base.metadata.tables["run_tags"]
sample_blocks: Table = Base.metadata.tables["sample_blocks"]
results: Table = Base.metadata.tables["results"]
slot_labels: Table = Base.metadata.tables["slot_labels"]
host_groups: Table = Base.metadata.tables["host_groups"]
host_group_hosts: Table = Base.metadata.tables["host_group_hosts"]
experiments: Table = Base.metadata.tables["experiments"]
