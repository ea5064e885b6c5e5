"""An imported run as its rows will store it: its context document and its results' rows,
made where the file is parsed (a second process for a large file,
history.import_parse), so that the writer only adds what the history gives (ids, names
numbered across the file, its host).

No SQLAlchemy here: a parse in a second process imports this and starts fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import NamedTuple, cast

from stripewise.history.json_values import json_safe
from stripewise.history.result_rows import ResultFields, result_fields
from stripewise.model.imported_run import ImportedRun
from stripewise.model.run_context import JsonObject, JsonValue, RunContext


class PreparedRun(NamedTuple):
    """A run of a file with what its rows hold: `run` for its names, target, time and spec
    (its context and results are not read), `context` as runs.context stores it, `results`
    as its results' rows."""

    run: ImportedRun
    context: JsonObject
    results: list[ResultFields]


def prepare(run: ImportedRun, source_name: str, sha256: str) -> PreparedRun:
    """`run` of the file `source_name` whose bytes have this SHA-256, as it will be stored."""
    record: JsonObject = {"file": source_name, "sha256": sha256}
    record |= {key: run.context.get(key) for key in ("format", "line")}
    return PreparedRun(run, context_document(run.context, record), result_fields(run.results))


# The context keys RunContext reads into typed fields (an import's own keys are none of
# these but `not_run`, after `import` in their order), and the import record's.
_TYPED_KEYS = frozenset(
    str(spec.metadata.get("key", spec.name)) for spec in fields(RunContext) if spec.name != "extra"
)
_IMPORT_RECORD_TYPES: tuple[tuple[str, type], ...] = (
    ("file", str),
    ("sha256", str),
    ("format", str),
    ("line", int),
)


def context_document(context: Mapping[str, JsonValue], record: JsonObject) -> JsonObject:
    """The document `RunContext.from_json({**context, "import": record}).to_json()` stores
    (its typed fields first, in their order, then the other keys as they came), NaN made
    null, without making a RunContext: a file of 100,000 runs made and encoded one a run.
    A context holding other keys RunContext types goes through RunContext itself."""
    typed = _TYPED_KEYS.intersection(context)
    if typed - {"not_run", "import"} or not all(isinstance(key, str) for key in context):
        stored = RunContext.from_json({**context, "import": record}).to_json()
        return cast(JsonObject, json_safe(stored))
    ordered: JsonObject = {
        key: value
        for key, kind in _IMPORT_RECORD_TYPES
        if isinstance(value := record.get(key), kind) and not isinstance(value, bool)
    }
    document: JsonObject = {
        "import": ordered | {k: v for k, v in record.items() if k not in ordered}
    }
    not_run = context.get("not_run")
    if isinstance(not_run, list) and all(isinstance(test, str) for test in not_run):
        document["not_run"] = list(not_run)
    document |= {k: v for k, v in context.items() if k not in document}
    return cast(JsonObject, json_safe(document))
