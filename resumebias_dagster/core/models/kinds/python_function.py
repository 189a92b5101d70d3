"""``kind: python``: a function of the user's environment (``entry_point:
package.module:function``, optional ``batch_size`` and ``order_seed``) that scores one résumé
per item; its contract is in ``core/models/python_scorer.py``. Its answers are read by every
task that gives a scorer items (seniority, fit)."""

from __future__ import annotations

import re

from resumebias_dagster.core.models.kinds.base import ModelKind
from resumebias_dagster.core.models.kinds.blind import check_blind
from resumebias_dagster.core.models.spec import ModelConfigError

# ``package.module:function`` (a dotted attribute path after the colon).
ENTRY_POINT = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _check(entry, where: str) -> None:
    check_blind(entry, where)
    entry_point = entry["entry_point"]
    if not isinstance(entry_point, str) or not ENTRY_POINT.match(entry_point):
        raise ModelConfigError(f"{where}: entry_point must have the form package.module:function, got {entry_point!r}")
    size = entry.get("batch_size", 1)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ModelConfigError(f"{where}: batch_size {size!r} must be a positive integer")


def _predict(spec, work, runtime, progress):
    from resumebias_dagster.core.models.python_scorer import resolved_model, score_items

    answers = score_items(spec, work.scorer_items())
    return work.from_answers(spec, answers, resolved_model(spec)), None


KIND = ModelKind(
    name="python",
    summary="a Python function of the user's that scores one résumé per item",
    fields=frozenset({"entry_point", "batch_size", "order_seed"}),
    required=frozenset({"entry_point"}),
    tasks=("seniority", "fit"),
    predict=_predict,
    check=_check,
    ui_kind=lambda spec: "python",
)
