"""How an experiment's runs are tagged: `experiment:<id>`, beside `experiment` on every one.

A module of its own, without the database, for readers that need only the tag (a run's
experiment, the start-up check for experiments a crash left running)."""

from __future__ import annotations

EXPERIMENT_TAG = "experiment"  # every run of every experiment carries it
TAG_PREFIX = f"{EXPERIMENT_TAG}:"


def experiment_tag(experiment_id: int) -> str:
    """The tag of one experiment's runs: `experiment:12`."""
    return f"{TAG_PREFIX}{experiment_id}"


def tagged_experiment(tag: str) -> int | None:
    """The experiment a tag names (`experiment:12` -> 12); None for any other tag."""
    number = tag.removeprefix(TAG_PREFIX)
    if tag.startswith(TAG_PREFIX) and number.isascii() and number.isdigit():
        return int(number)
    return None
