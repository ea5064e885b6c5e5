"""No product module over 500 lines (STYLE.md; issue 30's target), measured from the files:
a module that grows past it is split by what it holds before it is committed."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "app" / "stripewise"
MAX_LINES = 500


def module_lines() -> dict[str, int]:
    return {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_no_product_module_is_over_500_lines() -> None:
    over = {name: lines for name, lines in module_lines().items() if lines > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines, to split by responsibility: {over}"
