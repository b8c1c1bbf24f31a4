"""Package faces that load their names on first use (PEP 562).

A package's ``__init__`` names its public API; importing every submodule to do so
would charge each command for the modules it never calls (start-up time,
docs/performance.md).  A face maps each public name to the submodule defining it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from importlib import import_module
from types import ModuleType
from typing import Any

_HOMES = "_lazy_homes"


class _Face(ModuleType):
    """A package module whose public names are imported when first read."""

    def __getattr__(self, name: str) -> Any:
        home = self.__dict__.get(_HOMES, {}).get(name)
        if home is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(import_module(f"{self.__name__}.{home}"), name)
        self.__dict__[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing `pkg.refresh` binds that submodule to `pkg.refresh`; where the face
        # names the function `refresh` defined in it, the function wins, as it did when
        # the face imported it eagerly (`from pkg.refresh import refresh`).
        if (
            isinstance(value, ModuleType)
            and self.__dict__.get(_HOMES, {}).get(name) == name
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


def lazy_face(package: str, homes: Mapping[str, str]) -> None:
    """Make ``package`` load each name of ``homes`` (name -> submodule) on first use; they
    are its ``__all__`` unless it names one (its ``X as X`` imports export them to mypy),
    in ruff's RUF022 order (CONSTANTS, Classes, functions), as the hand-written lists were."""
    module = sys.modules[package]
    module.__dict__[_HOMES] = dict(homes)
    order = sorted(homes, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))
    module.__dict__.setdefault("__all__", order)
    module.__class__ = _Face
