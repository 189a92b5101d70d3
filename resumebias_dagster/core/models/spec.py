"""A model of the models config as the package reads it (``ModelSpec``), and the error every
malformed entry raises. Parsing is in ``model_config``; what each kind accepts is in ``kinds/``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ModelConfigError(ValueError):
    """The models config is malformed; the message names the file and the entry."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    kind: str
    temperature: float
    runs_per_cell: int
    options: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True
    # The model this one replaces ("" if none): audit_changes compares its first audit with that
    # model's latest (core/history/).
    succeeds: str = ""

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)
