"""fio JSON output (`--output-format=json` or `json+`), plain or from client/server runs, as
imported runs (`importers` lists this format and calls `parse`).

Reading the file (text around the JSON, several documents, a damaged one among them) is
`documents`'; the job entries are `report`'s, as for the helper's engine; the figures of a job
entry are `results`'; clients and their total are `import_clients`'. Here each document becomes
runs: one for a plain run, one per client plus
their total in client mode. A document that cannot be read is skipped with a warning naming
its line, as long as another one can; figures no run can have still refuse the whole file.
"""

from __future__ import annotations

import os
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from stripewise.fio.documents import Report, fio_documents
from stripewise.fio.import_clients import (
    TOTAL_JOB,
    Client,
    common_options,
    global_options,
    split,
    total_results,
)
from stripewise.fio.mapping import kind_of
from stripewise.fio.report import entries
from stripewise.fio.results import Unread, histograms, job_results
from stripewise.model.imported_run import (
    NAME_MAX,
    ImportedRun,
    ImportFormatError,
    clip,
    text_lines,
)
from stripewise.model.run import RunStatus

ENGINE = "fio"
_LIFTED = ("rw", "bs", "iodepth", "numjobs", "size", "ioengine", "direct", "runtime")
_SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError)
Doc = tuple[Sequence[str], int, int]  # a file's lines, and its document's first and last


class _Unreadable(ImportFormatError):
    """A document with nothing to import (no jobs, no I/O, another shape than fio writes):
    skipped when the file holds other documents, the file's error when it holds none."""


def looks_like(text: str) -> bool:
    return (
        '"fio version"' in text
        or '"client_stats"' in text
        or ('"jobs"' in text and '"jobname"' in text)
    )


def parse(text: str, source: str) -> list[ImportedRun]:
    reports, problems = fio_documents(text, source)
    lines = text_lines(text)
    ends = [r.line - 1 for r in reports[1:]] + [len(lines)] if reports else []
    runs: list[ImportedRun] = []
    for report, end in zip(reports, ends, strict=True):
        # the kept report's lines, to name those of figures that are no numbers
        doc = (lines, report.last_line, end)
        try:
            runs.extend(_runs_of(report, source, problems, doc))
        except _Unreadable as exc:
            problems.append(exc)
        except ImportFormatError:
            raise  # figures no run can have: the whole file is refused
        except _SHAPE_ERRORS as exc:
            # a file is untrusted input: a field of another type than fio writes skips its
            # document, named by line (the file's error if nothing else is readable), never
            # a traceback
            problems.append(
                ImportFormatError(
                    source,
                    report.line,
                    f"fio JSON of an unexpected shape ({type(exc).__name__}: {exc})",
                )
            )
    if not runs:
        raise problems[0] if problems else ImportFormatError(source, 1, "no fio JSON output found")
    warnings = tuple(_warning(p) for p in sorted(problems, key=lambda p: p.line))
    warnings += tuple(_interval_warning(r, source) for r in reports if r.reports > 1)
    return [replace(run, warnings=(*run.warnings, *warnings)) for run in runs]


def _warning(problem: ImportFormatError) -> str:
    return f"{problem}; skipped, the rest of the file was read"


def _interval_warning(report: Report, source: str) -> str:
    interim = report.reports - 1
    earlier = f"{interim} interim reports before it are" if interim > 1 else "interim report is"
    return (
        f"{source} line {report.line}: {report.reports} --status-interval reports of one run; "
        f"the last (line {report.last_line}) is its result, the {earlier} not kept (each "
        "covers the same run up to its time; imported runs store no samples)"
    )


def _runs_of(
    report: Report, source: str, problems: list[ImportFormatError], doc: Doc
) -> list[ImportedRun]:
    """The runs of one document; a client that did nothing is left out, named in `problems`."""
    obj, line = report.obj, report.line
    found = entries(obj)
    if not found:
        raise _Unreadable(source, line, "fio JSON with no jobs")
    if "client_stats" not in obj:
        runs = [_run(obj, found, line, source, global_options(obj, None, None), doc=doc)]
    else:
        clients, totals = split(obj, found)
        runs = []
        for client in clients:
            try:
                runs.append(_client_run(obj, client, line, source, doc))
            except _Unreadable as exc:
                problems.append(
                    _Unreadable(source, line, f"client {client.address}: {exc.message}")
                )
        if not runs:
            raise _Unreadable(source, line, "fio JSON whose clients did no I/O")
        if len(clients) > 1:
            runs.append(_total_run(obj, clients, totals, line, source, doc))
    if report.reports > 1:
        for run in runs:
            run.context["status_reports"] = report.reports
    return runs


def _client_run(
    obj: dict[str, Any], client: Client, line: int, source: str, doc: Doc
) -> ImportedRun:
    run = _run(
        obj, client.entries, line, source, client.global_options, host=client.hostname, doc=doc
    )
    run.context["client"] = {"hostname": client.hostname, "port": client.port}
    run.context["disk_util"] = list(client.disk_util)
    return replace(run, name=clip(f"{run.name} on {client.address}", NAME_MAX))


def _total_run(
    obj: dict[str, Any],
    clients: list[Client],
    totals: list[dict[str, Any]],
    line: int,
    source: str,
    doc: Doc,
) -> ImportedRun:
    unread = Unread(*doc)
    results = total_results(clients, totals, source, line, unread)
    context = _context(obj, line, totals)
    context["clients"] = len(clients)
    context["client_addresses"] = [c.address for c in clients]
    targets = _targets(ChainMap(o, c.global_options) for c in clients for o in _jobs(c).values())
    return ImportedRun(
        name=clip(f"fio total of {len(clients)} clients ({TOTAL_JOB})", NAME_MAX),
        host=None,
        engine=ENGINE,
        engine_version=_version(obj),
        target=", ".join(targets),
        started_at=_time(obj.get("timestamp"), source, line),
        spec={"global": common_options(clients), "jobs": {}},
        context=context,
        results=results,
        warnings=(unread.warning(source, line),) if unread else (),
    )


def _run(
    obj: dict[str, Any],
    found: list[dict[str, Any]],
    line: int,
    source: str,
    options: dict[str, Any],
    host: str | None = None,
    doc: Doc = ((), 1, 0),
) -> ImportedRun:
    # each job's own options, as fio lists them; what it ran is those over the global ones
    # (a view: a copy of the globals in every job grew as globals x jobs)
    jobs = {
        str(e.get("jobname")): _mapping(e.get("job options"))
        for e in found
        if e.get("jobname") != TOTAL_JOB
    }
    ran = {name: ChainMap(own, options) for name, own in jobs.items()}
    unknown = [name for name, job in ran.items() if not kind_of(job)]
    unread = Unread(*doc)
    results = job_results(found, source, line, unknown, unread)
    if not results:
        raise _Unreadable(source, line, "fio JSON whose jobs did no I/O")
    context = _context(obj, line, found)
    warnings: tuple[str, ...] = ()
    if unknown:
        context["rw_unknown"] = unknown
        warnings = (_rw_warning(unknown, source, line),)
    if unread:
        warnings += (unread.warning(source, line),)
    failed = context.get("errors", {})
    warnings += tuple(_error_warning(job, code, source, line) for job, code in failed.items())
    return ImportedRun(
        name=clip(f"fio {', '.join(jobs)}", NAME_MAX),
        host=host,
        engine=ENGINE,
        engine_version=_version(obj),
        target=", ".join(_targets(ran.values())),
        started_at=_time(obj.get("timestamp"), source, line),
        spec=_spec(options, jobs, ran),
        context=context,
        results=results,
        warnings=warnings,
        status=RunStatus.FAILED if failed else RunStatus.COMPLETE,
    )


def _error_warning(job: str, code: object, source: str, line: int) -> str:
    """A job fio says ended with an error: it stopped early, so its figures are not the
    workload's; the run is filed `failed`, its figures kept as fio wrote them."""
    reason = f"error {code}"
    if isinstance(code, int) and 0 < code < 4096:
        reason += f" ({os.strerror(code)})"
    return (
        f"{source} line {line}: job {clip(job, NAME_MAX)} ended with {reason}: it stopped "
        "early, so its figures are not the whole workload's; the run is filed failed"
    )


def _rw_warning(jobs: list[str], source: str, line: int) -> str:
    names = clip(", ".join(jobs), NAME_MAX)
    return (
        f"{source} line {line}: no rw for job{'s' if len(jobs) > 1 else ''} {names} (fio 2.x "
        'writes no "job options"): what they ran is unknown, so their figures are not matched '
        f"to phases: each is named by job and the direction that did I/O (`{jobs[0]} write`, "
        f"`{jobs[0]} read`)"
    )


def _jobs(client: Client) -> dict[str, dict[str, Any]]:
    return {str(e.get("jobname")): _mapping(e.get("job options")) for e in client.entries}


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _version(obj: dict[str, Any]) -> str:
    return str(obj.get("fio version") or "").removeprefix("fio-")


def _context(obj: dict[str, Any], line: int, found: list[dict[str, Any]]) -> dict[str, Any]:
    context: dict[str, Any] = {
        "format": "fio json client" if "client_stats" in obj else "fio json",
        "line": line,
        "time": obj.get("time"),
        "jobs": len(found),
    }
    if errors := {str(e.get("jobname")): e["error"] for e in found if e.get("error")}:
        context["errors"] = errors
    if found_histograms := histograms(found):
        context["latency_histograms"] = found_histograms
    return context


def _spec(
    global_options: dict[str, Any],
    jobs: dict[str, dict[str, Any]],
    ran: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """fio's global options, each job's own, and the options every job ran with alike."""
    spec: dict[str, Any] = {"global": dict(global_options), "jobs": jobs}
    for key in _LIFTED:
        found = [options.get(key) for options in ran.values()]
        if found and found[0] is not None and all(value == found[0] for value in found):
            spec[key] = found[0]
    return spec


def _targets(jobs: Any) -> list[str]:
    return list(dict.fromkeys(t for t in map(_target, jobs) if t))


def _target(options: Mapping[str, Any]) -> str:
    filename, directory = options.get("filename"), options.get("directory")
    if filename and directory and not str(filename).startswith("/"):
        return f"{str(directory).rstrip('/')}/{filename}"
    return str(filename or directory or "")


def _time(timestamp: Any, source: str, line: int) -> datetime | None:
    if not isinstance(timestamp, int | float) or not timestamp > 0:
        return None
    try:
        return datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, ValueError, OSError):  # past year 9999, or infinite
        raise ImportFormatError(source, line, f"timestamp: {timestamp:g} is not a time") from None
