"""Values as JSON columns take them: PostgreSQL rejects NaN and infinities in JSON."""

from __future__ import annotations

import math
from typing import Any


def json_safe(value: Any) -> Any:
    """Non-finite floats become null at any depth; tuples become lists."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return finite(value)


def finite(value: Any) -> Any:
    """NaN and infinities are not valid JSON nor portable SQL: store them as missing."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
