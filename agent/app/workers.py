"""The app of one ``netagent serve --workers N`` process, built from what its parent passed on.

uvicorn's multi-process mode starts each worker in a fresh interpreter and builds the app there
from an import string, so nothing the parent holds (its settings, its Deployment object) reaches
a worker except through the environment: the settings as NETAGENT_* variables
(:func:`settings_environment`), and the deployment as the import path of a function returning
it (``package.module:function``) in NETAGENT_DEPLOYMENT_FACTORY. The core stays
domain-agnostic: it imports whatever that path names, never a deployment package of its own.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agent.base.settings import VARIABLES, Settings
from agent.ports import Deployment

if TYPE_CHECKING:
    from fastapi import FastAPI

DEPLOYMENT_FACTORY_ENV = "NETAGENT_DEPLOYMENT_FACTORY"
APP_FACTORY = "agent.app.workers:worker_app"
"""What uvicorn imports and calls in each worker (``factory=True``)."""


def load_deployment(path: str) -> Deployment:
    """Call the ``module:function`` at ``path``; a path that names no deployment is a ValueError."""
    module_name, separator, attribute = path.partition(":")
    if not (module_name and separator and attribute):
        raise ValueError(f"{DEPLOYMENT_FACTORY_ENV} must be module:function, not {path!r}")
    try:
        target: object = importlib.import_module(module_name)
        for name in attribute.split("."):
            target = getattr(target, name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{DEPLOYMENT_FACTORY_ENV}: cannot import {path!r}: {exc}") from None
    deployment = target() if callable(target) else target
    if not isinstance(deployment, Deployment):
        raise ValueError(f"{DEPLOYMENT_FACTORY_ENV}: {path!r} returned no Deployment")
    return deployment


def settings_environment(settings: Settings) -> dict[str, str]:
    """NETAGENT_* values from which ``Settings.from_env`` rebuilds ``settings`` (its limits
    are read from the environment as they were)."""
    environment: dict[str, str] = {}
    for name, (variable, _) in VARIABLES.items():
        value = getattr(settings, name)
        if value is None:
            continue  # unset in the parent as well, or no option would have left it None
        if isinstance(value, bool):
            environment[variable] = "1" if value else "0"
        elif isinstance(value, str | int | float | Path):
            environment[variable] = str(value)
    return environment


def worker_app(environ: Mapping[str, str] | None = None) -> FastAPI:
    """The app one worker serves: settings and deployment from the environment."""
    from agent.app import create_app
    from agent.observability.log_format import configure_logging

    env = os.environ if environ is None else environ
    path = env.get(DEPLOYMENT_FACTORY_ENV, "")
    if not path:
        raise RuntimeError(f"a worker needs {DEPLOYMENT_FACTORY_ENV} (netagent serve sets it)")
    settings = Settings.from_env(env)
    configure_logging(settings.log_level, settings.log_format)  # a fresh interpreter's root
    return create_app(settings, load_deployment(path), grpc_shared_port=True)
