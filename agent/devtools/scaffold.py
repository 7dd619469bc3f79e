"""``new-skill``: a new skill that works on day one, with its test and its lock entry.

The core checks what was asked (id, name, scopes, owner), finds the package the skills folder
is imported as, lets a template (the deployment's own, ``Deployment.scaffold``, or the core's
domain-free one) render the files, writes them, and records the new interface in the
interface lock, leaving every other lock entry as it was. ``describe_skill`` needs no change:
it learns ids and aliases from the registry.

Everything is checked before anything is written; if the written skill then fails to load,
every file is put back as it was. Refusals raise ``ScaffoldError`` with a message for people.
The helpers below (``json_text``, ``schema_reference``, ``python_list``, ``import_line``) are
for templates: generated code must pass the project's lint as it is.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import keyword
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.base.errors import ConfigurationError
from agent.interfaces import SCHEMAS_DIR
from agent.ports import SkillFiles, SkillRequest, SkillTemplate
from agent.registry.loader import RegistryError, load_registry
from agent.registry.versioning import LOCK_FILE, lock_entries

_MANIFEST_DEFS: dict[str, Any] = json.loads(
    (SCHEMAS_DIR / "capability-manifest.schema.json").read_text(encoding="utf-8")
)["$defs"]
SKILL_ID_PATTERN: str = _MANIFEST_DEFS["skill_id"]["pattern"]
"""The manifest schema's skill-id grammar (``^[a-z][a-z0-9_]{1,62}$``)."""
SCOPE_PATTERN: str = _MANIFEST_DEFS["scope"]["pattern"]
NAME_MAX = 120  # the manifest schema's skill.name maxLength
RESERVED_IDS = frozenset({"describe_skill"})
"""Ids the agent itself owns."""
VISIBILITIES = ("public", "extended")
DEFAULT_OWNER = "unassigned"
LINE_LENGTH = 100  # pyproject.toml [tool.ruff] line-length: generated code must stay lint-clean
SCOPE_MAX = 64  # longer scopes could not be rendered within LINE_LENGTH
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class ScaffoldError(ConfigurationError):
    """The skill cannot be created; nothing was written (or everything was put back)."""


@dataclass(frozen=True)
class Scaffolded:
    """What ``new_skill`` did: files created, files changed, and anything worth knowing."""

    skill_id: str
    created: tuple[Path, ...]
    updated: tuple[Path, ...]
    notes: tuple[str, ...] = field(default=())


# -- checks ------------------------------------------------------------------------------------


def check_id(skill_id: str) -> None:
    """The id names a folder, a module and a lock entry: refuse one that cannot be all three."""
    if not re.fullmatch(SKILL_ID_PATTERN, skill_id):
        raise ScaffoldError(
            f"skill id {skill_id!r} is not valid: it must match {SKILL_ID_PATTERN} (a lower-case "
            "letter, then 1 to 62 lower-case letters, digits or underscores)"
        )
    if skill_id in RESERVED_IDS:
        raise ScaffoldError(f"skill id {skill_id!r} is reserved by the agent itself")
    if keyword.iskeyword(skill_id):
        raise ScaffoldError(
            f"skill id {skill_id!r} is a Python keyword: its handler module could not be imported"
        )


def check_text(label: str, value: str, limit: int) -> str:
    """One printable line: it is written into JSON and Python source as it is."""
    value = value.strip()
    if not value or len(value) > limit or any(not c.isprintable() for c in value):
        raise ScaffoldError(f"{label} must be 1 to {limit} printable characters on one line")
    return value


def check_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """At least one scope, each as the manifest schema allows and short enough to render."""
    chosen = tuple(dict.fromkeys(scopes))
    if not chosen:
        raise ScaffoldError("give the skill at least one scope (callers need it to use the skill)")
    for scope in chosen:
        if not re.fullmatch(SCOPE_PATTERN, scope) or len(scope) > SCOPE_MAX:
            raise ScaffoldError(
                f"scope {scope!r} is not valid: at most {SCOPE_MAX} characters matching "
                f"{SCOPE_PATTERN}"
            )
    return chosen


def _read_lock(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        locked = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScaffoldError(f"{path}: cannot read the interface lock: {exc}") from None
    if not isinstance(locked, dict):
        raise ScaffoldError(f"{path}: the interface lock is not a JSON object")
    return locked


def skills_package(skills_dir: Path) -> str:
    """The dotted name ``skills_dir`` is imported as (``skills``, ``examples.invoices.skills``).

    A manifest names its handler by module, so the new skill's folder must be importable: the
    shortest trailing run of folder names that Python imports as this very folder wins.
    """
    folder = skills_dir.resolve()
    parts = folder.parts
    for start in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[start:])
        if not all(part.isidentifier() for part in parts[start:]):
            break
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        places = spec.submodule_search_locations if spec is not None else None
        if places and any(Path(place).resolve() == folder for place in places):
            return name
    raise ScaffoldError(
        f"{skills_dir} is not an importable package: handlers are imported by module name, so "
        "it needs an __init__.py and its parent on the Python path"
    )


def schema_prefix(agent_name: str) -> str:
    """``urn:<agent name, lower case, dashed>``: where the new schemas' ``schema_uri``s start."""
    slug = re.sub(r"[^a-z0-9]+", "-", agent_name.lower()).strip("-") or "agent"
    return f"urn:{slug}"


# -- helpers for templates ---------------------------------------------------------------------


def json_text(value: Any) -> str:
    """A JSON file's text, as the repository writes them."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def schema_reference(request: SkillRequest, role: str, file: str) -> dict[str, str]:
    """A manifest's reference to one of the skill's schema files, version 1.0."""
    dashed = request.skill_id.replace("_", "-")
    return {
        "file": file,
        "schema_uri": f"{request.schema_prefix}:schema:{dashed}:{role}",
        "version": "1.0",
    }


def python_list(prefix: str, items: Sequence[str]) -> str:
    """``prefix`` + a list of strings, on one line if it fits, else one item a line."""
    line = prefix + json.dumps(list(items))
    if len(line) <= LINE_LENGTH:
        return line
    return prefix + "[\n" + "".join(f"    {json.dumps(item)},\n" for item in items) + "]"


def import_line(module: str, name: str) -> str:
    """``from module import name as name`` (a re-export), wrapped when it is too long."""
    line = f"from {module} import {name} as {name}"
    if len(line) <= LINE_LENGTH:
        return line
    return f"from {module} import (\n    {name} as {name},\n)"


# -- writing -----------------------------------------------------------------------------------


class _Changes:
    """Files written so far, so a failure can put everything back."""

    def __init__(self) -> None:
        self.created: list[Path] = []
        self.updated: list[tuple[Path, str | None]] = []
        self.folder: Path | None = None

    def create(self, path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")
        self.created.append(path)

    def update(self, path: Path, text: str) -> None:
        original = path.read_text(encoding="utf-8") if path.exists() else None
        path.write_text(text, encoding="utf-8")
        self.updated.append((path, original))

    def undo(self) -> None:
        for path, original in reversed(self.updated):
            if original is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(original, encoding="utf-8")
        for path in self.created:
            path.unlink(missing_ok=True)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _check_folders(skills_dir: Path, tests_dir: Path) -> None:
    """Both folders exist (an installed package has no tests folder beside its skills)."""
    for label, folder in (("skills", skills_dir), ("tests", tests_dir)):
        if not folder.is_dir():
            raise ScaffoldError(f"{folder}: {label} directory not found")


def _check_free(skill_id: str, skills_dir: Path, tests_dir: Path) -> dict[str, Any] | None:
    """Refuse an id that is taken (folder, test, lock) or a registry that is broken already;
    returns the lock as it is (None: there is none yet)."""
    for path in (skills_dir / skill_id, tests_dir / f"test_skill_{skill_id}.py"):
        if path.exists():
            raise ScaffoldError(f"skill id {skill_id!r} is taken: {path} exists already")
    lock_path = skills_dir / LOCK_FILE
    locked = _read_lock(lock_path)
    if locked is not None and skill_id in locked:
        raise ScaffoldError(
            f"skill id {skill_id!r} is in the interface lock ({lock_path}): an interface was "
            "released under it before; choose another id"
        )
    try:
        load_registry(skills_dir)
    except RegistryError as exc:
        raise ScaffoldError(f"fix the registry first (validate): {exc}") from None
    return locked


def _write(
    skill_id: str, skills_dir: Path, test_path: Path, rendered: SkillFiles, locked: dict[str, Any]
) -> _Changes:
    """Write the skill and its test, then lock the interface the registry computes for it;
    anything that fails puts every file back."""
    folder = skills_dir / skill_id
    changes = _Changes()
    try:
        folder.mkdir()
        changes.folder = folder
        for file, text in {"__init__.py": "", **rendered.files}.items():
            changes.create(folder / file, text)
        changes.create(test_path, rendered.test)
        importlib.invalidate_caches()
        entries = {**locked, skill_id: lock_entries(load_registry(skills_dir))[skill_id]}
        changes.update(skills_dir / LOCK_FILE, json.dumps(entries, indent=2, sort_keys=True) + "\n")
    except (OSError, RegistryError, KeyError) as exc:
        changes.undo()
        reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ScaffoldError(f"the new skill does not load, so nothing was kept: {reason}") from None
    except BaseException:
        changes.undo()
        raise
    return changes


def new_skill(
    skill_id: str,
    skills_dir: Path,
    tests_dir: Path,
    template: SkillTemplate,
    *,
    package: str | None = None,
    name: str | None = None,
    visibility: str = "extended",
    scopes: Sequence[str] | None = None,
    owner: str = DEFAULT_OWNER,
    agent_name: str = "agent",
    factory: str = "",
) -> Scaffolded:
    """Create skill ``skill_id`` from ``template`` in ``skills_dir``, its test in ``tests_dir``.

    ``package``: the dotted name ``skills_dir`` is imported as (found on the Python path when
    not given); ``scopes``: the template's defaults when None; ``agent_name``: the start of
    the new ``schema_uri``s; ``factory``: the deployment's ``module:function``, for the
    generated test. Raises ScaffoldError, having written nothing, when the id is taken,
    malformed or reserved, or the skill would not load.
    """
    check_id(skill_id)
    if visibility not in VISIBILITIES:
        raise ScaffoldError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    skills_dir, tests_dir = Path(skills_dir), Path(tests_dir)
    _check_folders(skills_dir, tests_dir)
    request = SkillRequest(
        skill_id=skill_id,
        name=check_text("--name", name or skill_id.replace("_", " ").capitalize(), NAME_MAX),
        visibility=visibility,
        scopes=check_scopes(template.default_scopes(skill_id) if scopes is None else scopes),
        owner=check_text("--owner", owner, NAME_MAX),
        package=package or skills_package(skills_dir),
        schema_prefix=schema_prefix(agent_name),
        factory=factory,
    )
    locked = _check_free(skill_id, skills_dir, tests_dir)
    rendered = template.render(request)
    test_path = tests_dir / f"test_skill_{skill_id}.py"
    changes = _write(skill_id, skills_dir, test_path, rendered, locked or {})
    notes = list(rendered.notes)
    if locked is None:
        notes.append(
            f"{skills_dir / LOCK_FILE} did not exist; it now locks only {skill_id!r}: run "
            "`validate --update-lock` to lock the others"
        )
    return Scaffolded(
        skill_id=skill_id,
        created=tuple(changes.created),
        updated=tuple(path for path, _ in changes.updated),
        notes=tuple(notes),
    )


def next_steps(
    result: Scaffolded, *, command: str, visibility: str, owner: str, root: Path
) -> list[str]:
    """What to do after ``new_skill``, for people: ``command`` is the deployment's command line
    (``netagent``, ``python -m examples.invoices``); paths are shown relative to ``root``."""

    def shown(path: Path) -> str:
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)

    skill_id = result.skill_id
    test = next(p for p in result.created if p.name == f"test_skill_{skill_id}.py")
    handler = next(p for p in result.created if p.name == "handler.py")
    folder = shown(handler.parent)
    lock = shown(handler.parent.parent / LOCK_FILE)
    owner_step = ", owner (--owner)" if owner == DEFAULT_OWNER else ""
    steps = [
        f"run its test: python -m pytest -q {shown(test)} (needs the test extra: "
        "pip install -q -e '.[test]')",
        f"replace the example in {folder}/handler.py and extract.py, and the schemas beside "
        "them, keeping the test green",
        f"edit {folder}/manifest.json: description, tags, examples, routing utterances (real "
        f"requests, for the router), limits{owner_step}",
        f"after changing its schemas or limits, before it ships: drop '{skill_id}' from {lock}, "
        f"then `{command} validate --update-lock` (docs/adding-a-skill.md, 'Changing it before "
        "it ships'); once shipped, bump skill_version instead",
        f"check: {command} validate, then the whole test suite",
        f"optionally, more plain names for 'describe ...' in its manifest's routing.aliases "
        f"(the id {skill_id} and its name already work)",
    ]
    if visibility == "public":
        steps.append(
            f"it is public, so the public card changed: review `{command} card diff`, then "
            f"`{command} card diff --update`"
        )
    return steps
