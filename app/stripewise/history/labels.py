"""The admin's slot labels ("Bay 12"), filed per host and per stable slot key."""

from __future__ import annotations

from sqlalchemy import delete, insert, select, update

from stripewise.history.database import Database
from stripewise.history.models import slot_labels, utc_now
from stripewise.history.store import HistoryStore

MAX_LABEL_LENGTH = 64


class SlotLabelStore(HistoryStore):
    """Shares the store's connection handling and its translation of driver errors."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)

    def labels(self, host_key: str) -> dict[str, str]:
        stmt = select(slot_labels.c.slot_key, slot_labels.c.label).where(
            slot_labels.c.host_key == host_key
        )
        with self._read() as conn:
            return {row.slot_key: row.label for row in conn.execute(stmt)}

    def set_label(self, host_key: str, slot_key: str, label: str | None) -> None:
        """A blank label removes the admin's name and the slot shows its port name again."""
        text = " ".join((label or "").split())
        if len(text) > MAX_LABEL_LENGTH:
            raise ValueError(f"a slot label has at most {MAX_LABEL_LENGTH} characters")
        where = (slot_labels.c.host_key == host_key) & (slot_labels.c.slot_key == slot_key)
        with self._write() as conn:
            if not text:
                conn.execute(delete(slot_labels).where(where))
                return
            changed = conn.execute(
                update(slot_labels).where(where).values(label=text, updated_at=utc_now())
            ).rowcount
            if not changed:
                conn.execute(
                    insert(slot_labels).values(
                        host_key=host_key, slot_key=slot_key, label=text, updated_at=utc_now()
                    )
                )
