"""Names a package exports but imports on first use (PEP 562), so importing it stays cheap.

``netagent --help`` and ``token`` must answer in well under a second; a package such as
``agent.client`` or ``agent.sdk`` re-exports names whose modules pull in httpx, SQLAlchemy or
the a2a-sdk. Each such package lists its names and their modules once and gets its module
``__getattr__`` here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def on_first_use(
    package: str, modules: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: a name of ``modules`` is imported from its
    module when first asked for and kept in ``namespace`` (the package's ``globals()``), so
    later lookups never come here; any other name raises AttributeError."""

    def lookup(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return lookup
