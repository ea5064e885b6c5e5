"""A comparison of measured runs with imported ones says every setting in words with its
unit, one setting in one row: bonnie++'s `file_size`, `file_size_bytes` (spec and context)
are the form's File size; its machine name is the host; an import's format and bonnie++'s
seed are bookkeeping."""

from __future__ import annotations

import re
from dataclasses import replace

from stripewise.model.compare import compare_runs
from stripewise.model.run_detail import RunDetail
from stripewise.model.setting_labels import setting_label, setting_text
from tests.fixtures.compared_runs import GiB, run, with_spec


def _bonnie(run_id: int, size: str, machine: str, version: str, **spec: object) -> RunDetail:
    """A bonnie++ CSV line as the importer stores it (h.db's runs 1 and 5)."""
    size_bytes = int(size.removesuffix("G")) * GiB
    options = {"file_size": size, "file_size_bytes": size_bytes, **spec}
    ctx = {
        "import": {"file": f"bonnie{run_id}.csv", "format": f"bonnie++ csv {version}", "line": 1},
        "format": f"bonnie++ csv {version}",
        "line": 1,
        "lines": [1],
        "machine": machine,
        "file_size_bytes": size_bytes,
        "too_fast": ["seq_stat_per_s", "random_stat_per_s"],
    }
    imported = run(run_id, ctx=ctx)
    summary = replace(imported.summary, host=machine, engine="bonnie++", engine_version=version)
    return replace(imported, summary=summary, spec=None, options=options, source="imported")


def _rows() -> dict[str, list[str]]:
    # the machine alone: a device knob keeps its sysfs name (`sdb read_ahead_kb`)
    measured = with_spec(run(1, ctx={"host": "thumper", "ram_bytes": 16 * GiB}), size=32 * GiB)
    imports = [
        _bonnie(2, "4G", "raidbox", "1.03", file_test={"files_x1024": 16}),
        _bonnie(3, "16G", "nas01", "1.97", concurrency=1, seed=1389898232, chunk_size_bytes=8192),
    ]
    comparison = compare_runs([measured, *imports])
    return {
        setting_label(d.key): [setting_text(d.key, v) for v in d.values] for d in comparison.context
    }


def test_an_imported_file_size_is_the_measured_file_size_in_one_row_with_its_unit() -> None:
    rows = _rows()
    assert rows["File size"] == ["32 GiB", "4 GiB", "16 GiB"]
    assert not [label for label in rows if "file_size" in label or "File size" in label[1:]]


def test_every_imported_setting_has_words_and_no_number_is_in_scientific_notation() -> None:
    rows = _rows()
    for label, texts in rows.items():
        assert "_" not in label and "." not in label, f"a raw key: {label}"
        assert not [t for t in texts if re.search(r"[0-9]e\+?[0-9]", t)], f"{label}: {texts}"
    assert rows["Host"] == ["thumper", "raidbox", "nas01"], "bonnie++'s machine is the host"
    assert rows["Engine version"] == ["1", "1.03", "1.97"]
    assert rows["Files (bonnie++ -n)"] == ["-", "16,384 files", "-"]
    assert rows["Streams (bonnie++ -c)"] == ["-", "-", "1"]
    assert rows["Block size (bonnie++ chunk)"] == ["-", "-", "8 KiB"]
    assert rows["Too fast to time (bonnie++ +++++)"][1] == (
        "Sequential file stats, Random file stats"
    )


def test_an_imports_format_and_bonnies_seed_are_bookkeeping() -> None:
    rows = _rows()
    assert not {"format", "Format", "seed", "Seed", "machine"} & set(rows)
