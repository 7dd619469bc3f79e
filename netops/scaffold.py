"""``netagent new-skill``: a new skill that works on day one, with its test and its lock entry.

``new_skill`` writes ``skills/<id>/`` (manifest, input/output/record schemas, a handler and an
extractor that really run against the inventory tool), ``tests/test_skill_<id>.py`` (starts a
real agent, describes the skill, invokes it, and checks the refusals), adds the id to
``describe_skill``'s text extractor, and records the new interface in the interface lock,
leaving every other lock entry as it was.

Everything is checked before anything is written; if the written skill then fails to load,
every file is put back as it was. Refusals raise ``ScaffoldError`` with a message for people.
"""

from __future__ import annotations

import importlib
import json
import keyword
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from agent.errors import ConfigurationError
from agent.interfaces import SCHEMAS_DIR
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
RECORD_KIND = "site-summary"
"""The one supporting-record kind the template emits, unless the id reads as it (see below)."""
OTHER_RECORD_KIND = "site-snapshot"
"""The template's record kind for a skill whose id reads as RECORD_KIND (``site_summary``)."""
VISIBILITIES = ("public", "extended")
DEFAULT_SCOPES = ("inventory.read",)
DEFAULT_OWNER = "unassigned"
LINE_LENGTH = 100  # pyproject.toml [tool.ruff] line-length: generated code must stay lint-clean
SCOPE_MAX = 64  # longer scopes could not be rendered within LINE_LENGTH
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SITES = ("nyc1", "lon1", "sin1", "fra1", "sfo1")  # demo sites, for example requests


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


def _check_id(skill_id: str) -> None:
    if not re.fullmatch(SKILL_ID_PATTERN, skill_id):
        raise ScaffoldError(
            f"skill id {skill_id!r} is not valid: it must match {SKILL_ID_PATTERN} (a lower-case "
            "letter, then 1 to 62 lower-case letters, digits or underscores)"
        )
    if skill_id in RESERVED_IDS:
        raise ScaffoldError(f"skill id {skill_id!r} is reserved by the agent itself")
    if keyword.iskeyword(skill_id):
        raise ScaffoldError(
            f"skill id {skill_id!r} is a Python keyword: skills.{skill_id}.handler could not be "
            "imported"
        )


def record_kind(skill_id: str) -> str:
    """The template's record kind for ``skill_id``: never one that reads as the skill id."""
    return OTHER_RECORD_KIND if skill_id.replace("_", "-") == RECORD_KIND else RECORD_KIND


def _check_text(label: str, value: str, limit: int) -> str:
    value = value.strip()
    if not value or len(value) > limit or any(not c.isprintable() for c in value):
        raise ScaffoldError(f"{label} must be 1 to {limit} printable characters on one line")
    return value


def _check_scopes(scopes: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(scopes))
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


# -- rendering ---------------------------------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _dashed(skill_id: str) -> str:
    return skill_id.replace("_", "-")


def _schema_file(skill_id: str, role: str, file: str) -> dict[str, str]:
    return {
        "file": file,
        "schema_uri": f"urn:netops-agent:schema:{_dashed(skill_id)}:{role}",
        "version": "1.0",
    }


def _utterances(name: str) -> list[str]:
    """Eight concrete example requests built from the name (no placeholders)."""
    phrase = name.rstrip(".!?").strip().lower()
    nyc, lon, sin, fra, sfo = SITES
    return [
        f"{phrase} for {nyc}",
        f"run the {phrase} for {lon}",
        f"show me the {phrase} of {sin}",
        f"give me a {phrase} for {fra}",
        f"i need the {phrase} at {sfo}",
        f"{phrase} please, site {nyc}",
        f"can you do a {phrase} on {lon}",
        f"get the {phrase} for site {sin}",
    ]


def _manifest(
    skill_id: str, name: str, visibility: str, scopes: list[str], owner: str
) -> dict[str, Any]:
    utterances = _utterances(name)
    kind = record_kind(skill_id)
    return {
        "id": skill_id,
        "state": "ga",
        "visibility": visibility,
        "skill": {
            "name": name,
            "description": (
                f"{name}: counts the caller's devices at one site and returns the count with a "
                f"{kind} record as evidence. (Generated by netagent new-skill as a working "
                "example; replace this description with what the skill does.)"
            ),
            "tags": ["inventory", "sites"],
            "examples": [utterances[0].capitalize() + ".", utterances[2].capitalize() + "."],
            "inputModes": ["application/json", "text/plain"],
            "outputModes": ["application/json"],
        },
        "requires_scopes": scopes,
        "tenants": "*",
        "handler": f"skills.{skill_id}.handler",
        "limits": {"timeout_seconds": 10, "max_concurrent": 16},
        "owner": owner,
        "tools": {"inventory": {"scopes": scopes}},
        "routing": {"utterances": utterances, "aliases": [name.lower()]},
        "interface": {
            "skill_version": "1.0",
            "input": _schema_file(skill_id, "input", "input.schema.json"),
            "output": _schema_file(skill_id, "output", "output.schema.json"),
            "records": {kind: _schema_file(skill_id, kind, f"{kind}.schema.json")},
            "interaction": {"response_modes": ["sync", "stream", "poll"], "cancelable": False},
            "authority": {"default_mode": "observe_only", "approval_may_be_required": False},
        },
    }


_SITE_SLUG = {
    "type": "string",
    "pattern": "^[a-z0-9][a-z0-9-]{0,63}$",
    "description": "Site slug, e.g. nyc1.",
}
INPUT_SCHEMA: dict[str, Any] = {
    "$schema": SCHEMA_DIALECT,
    "type": "object",
    "additionalProperties": False,
    "required": ["site"],
    "properties": {"site": _SITE_SLUG},
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "$schema": SCHEMA_DIALECT,
    "type": "object",
    "required": ["site", "device_count", "supporting_record_refs"],
    "properties": {
        "site": {"type": "string"},
        "device_count": {"type": "integer", "minimum": 0},
        "supporting_record_refs": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string"},
            "description": "artifactIds of the __RECORD_KIND__ records this result rests on.",
        },
    },
}


def output_schema(skill_id: str) -> dict[str, Any]:
    """OUTPUT_SCHEMA, its description naming ``skill_id``'s record kind."""
    text = json.dumps(OUTPUT_SCHEMA).replace("__RECORD_KIND__", record_kind(skill_id))
    return cast(dict[str, Any], json.loads(text))


RECORD_SCHEMA: dict[str, Any] = {
    "$schema": SCHEMA_DIALECT,
    "type": "object",
    "required": ["record_id", "site", "device_count", "observed_at"],
    "properties": {
        "record_id": {"type": "string"},
        "site": {"type": "string"},
        "device_count": {"type": "integer", "minimum": 0},
        "observed_at": {"type": "string", "format": "date-time"},
    },
}

HANDLER = '''\
"""Example skill generated by ``netagent new-skill``: a site's device count, with evidence.

It works as it is, so the generated test passes before you change anything: it counts the
caller's devices at one site through the inventory tool and returns the count with a
``__RECORD_KIND__`` record as its evidence. To make it the real skill, replace, keeping the shape:

* ``authorize``: resource-level checks, run before the task is accepted. Refuse what the caller
  may not reach with AUTHORIZATION_FAILED and the same message whether it belongs to another
  tenant or does not exist at all (project choice 14, docs/schema-interfaces.md).
* ``handle``: reach data only through ``ctx.tool(name)`` (the tools manifest.json declares),
  emit every supporting record with ``ctx.emit_record`` before returning, and return output
  that names those records in ``supporting_record_refs``.
* ``summarize``: the result as text, for callers that accept only ``text/plain``.
* ``RECORD_KIND`` and the schemas beside this file (input, output, __RECORD_KIND__): they are the
  contract; change them together with manifest.json, then re-lock (see manifest.json's
  ``interface``; ``netagent validate`` says what to do).
"""

from __future__ import annotations

from typing import Any

from agent.interfaces import ErrorCode, SkillError
from agent.server.skill_context import SkillContext, rfc3339
__EXTRACT_IMPORT__

RECORD_KIND = "__RECORD_KIND__"
NOT_ACCESSIBLE = "resource not found or not accessible"


async def _caller_sites(ctx: SkillContext) -> set[str]:
    """Slugs of the sites the caller's tenant owns or has devices at."""
    return {site["slug"] for site in await ctx.tool("inventory").sites()}


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """Replace: the site must be one of the caller's; any other site looks absent."""
    if arguments["site"] not in await _caller_sites(ctx):
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Replace: count the caller's devices at the site; the count is emitted as evidence."""
    site = arguments["site"]
    devices = await ctx.tool("inventory").devices(site=site)
    record_id = f"{RECORD_KIND}-{site}"
    await ctx.emit_record(
        RECORD_KIND,
        {
            "record_id": record_id,
            "site": site,
            "device_count": len(devices),
            "observed_at": rfc3339(ctx.now()),
        },
        artifact_id=record_id,
    )
    return {"site": site, "device_count": len(devices), "supporting_record_refs": [record_id]}


def summarize(output: dict[str, Any]) -> str:
    """Replace: the result as one line of text."""
    return f"Site {output['site']}: {output['device_count']} devices."
'''

EXTRACT = '''\
"""Arguments from plain text, for the router: replace with what your input schema needs.

When a caller sends text instead of a skill request, the router picks a skill and calls its
``extract(text)``: it returns the arguments the text states and leaves the rest out (the
router then asks for what is missing, by JSON Pointer). Keep it pure, fast and total: no I/O,
and never raise (``total`` turns any failure into ``{}``).
"""

from __future__ import annotations

import re
from typing import Any

from skills.common.text import total

SITE = re.compile(r"\\b[a-z]{3}\\d{1,2}\\b")
"""A site slug: three letters and a number (``nyc1``)."""


@total
def extract(text: str) -> dict[str, Any]:
    """``{"site": ...}`` for the first site slug ``text`` names, else ``{}``."""
    found = SITE.search(text.lower())
    return {"site": found.group(0)} if found else {}
'''

TEST = '''\
"""Generated by ``netagent new-skill``: describe the new skill, invoke it, refuse it.

It starts a real agent (seeded demo inventory, fixed clock) serving every skill in skills/.
Keep it green while you replace the example: change SITE, the arguments and the assertions on
the output to the skill's real contract.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from tests.a2a_helpers import binding_of, call, describe, invoke
from tests.conftest import RunningAgent, start_agent

SKILL_ID = "__SKILL_ID__"
SCOPES = __SCOPES__
RECORD_KIND = "__RECORD_KIND__"
SITE = "nyc1"  # a site of tenant acme (alice) in the demo inventory, not of globex (gary)
NOT_ACCESSIBLE = "resource not found or not accessible"
WITHOUT_SCOPE = "__WITHOUT_SCOPE__"
"""__WITHOUT_SCOPE_WHY__"""


@pytest.fixture(scope="module")
def skill_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    """A real agent on 127.0.0.1 with the repository's skills, this one included."""
    running = start_agent(tmp_path_factory.mktemp("new-skill-home"))
    yield running
    running.stop()


def test_extract_finds_the_site() -> None:
    extract = importlib.import_module(f"skills.{SKILL_ID}.extract").extract
    assert extract(f"please run it for {SITE}") == {"site": SITE}
    assert extract("nothing to see here") == {}


async def test_describe_returns_the_interface(skill_agent: RunningAgent) -> None:
    token = skill_agent.token("alice", scopes=SCOPES)
    outcome = await describe(skill_agent.base_url, token, SKILL_ID)
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task
    described = outcome.result("describe_skill")
    assert described["skill_id"] == SKILL_ID
    assert list(described["skill_interface"]["supporting_record_schemas"]) == [RECORD_KIND]


async def test_invoke_completes_with_its_evidence(skill_agent: RunningAgent) -> None:
    token = skill_agent.token("alice", scopes=SCOPES)
    outcome = await call(skill_agent.base_url, token, SKILL_ID, {"site": SITE})
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task
    output = outcome.result(SKILL_ID)
    assert output["site"] == SITE
    assert output["device_count"] > 0
    records = outcome.artifacts(RECORD_KIND)
    assert [r["artifactId"] for r in records] == output["supporting_record_refs"]
    (part,) = records[0]["parts"]
    assert part["data"]["device_count"] == output["device_count"]


async def test_a_caller_without_the_scope_is_refused(skill_agent: RunningAgent) -> None:
    entitled = skill_agent.token("alice", scopes=SCOPES)
    interface = await binding_of(skill_agent.base_url, entitled, SKILL_ID)
    token = skill_agent.token("alice", scopes=[])
    outcome = await invoke(skill_agent.base_url, token, SKILL_ID, {"site": SITE}, interface)
    assert outcome.state == "TASK_STATE_REJECTED", outcome.task
    assert outcome.error["code"] == WITHOUT_SCOPE


async def test_another_tenants_site_is_refused(skill_agent: RunningAgent) -> None:
    token = skill_agent.token("gary", scopes=SCOPES)
    outcome = await call(skill_agent.base_url, token, SKILL_ID, {"site": SITE})
    assert outcome.state == "TASK_STATE_REJECTED", outcome.task
    assert outcome.error == {"code": "authorization_failed", "message": NOT_ACCESSIBLE}
'''

_WITHOUT_SCOPE = {
    "extended": (
        "skill_not_advertised",
        "An extended skill is not even listed to a caller who may not use it.",
    ),
    "public": (
        "authorization_failed",
        "A public skill is listed to everyone, but only callers with its scopes may use it.",
    ),
}


def _python_list(prefix: str, items: Sequence[str]) -> str:
    """``prefix`` + a list of strings, on one line if it fits, else one item a line."""
    line = prefix + json.dumps(list(items))
    if len(line) <= LINE_LENGTH:
        return line
    return prefix + "[\n" + "".join(f"    {json.dumps(item)},\n" for item in items) + "]"


def _extract_import(skill_id: str) -> str:
    line = f"from skills.{skill_id}.extract import extract as extract"
    if len(line) <= LINE_LENGTH:
        return line
    return f"from skills.{skill_id}.extract import (\n    extract as extract,\n)"


def _handler(skill_id: str) -> str:
    return HANDLER.replace("__EXTRACT_IMPORT__", _extract_import(skill_id)).replace(
        "__RECORD_KIND__", record_kind(skill_id)
    )


def _test(skill_id: str, visibility: str, scopes: list[str]) -> str:
    code, why = _WITHOUT_SCOPE[visibility]
    return (
        TEST.replace("__SKILL_ID__", skill_id)
        .replace("SCOPES = __SCOPES__", _python_list("SCOPES = ", scopes))
        .replace("__WITHOUT_SCOPE__", code)
        .replace("__WITHOUT_SCOPE_WHY__", why)
        .replace("__RECORD_KIND__", record_kind(skill_id))
    )


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


def _inventory_note(scopes: list[str]) -> str | None:
    from db.gate import OPERATION_SCOPES

    needed = OPERATION_SCOPES["devices"] & OPERATION_SCOPES["sites"]
    if needed & set(scopes):
        return None
    return (
        "none of the scopes lets the inventory tool list sites and devices ("
        + ", ".join(sorted(needed))
        + "): the example handler will be refused until you change it or add such a scope"
    )


def new_skill(
    skill_id: str,
    skills_dir: Path,
    tests_dir: Path,
    *,
    name: str | None = None,
    visibility: str = "extended",
    scopes: Sequence[str] = DEFAULT_SCOPES,
    owner: str = DEFAULT_OWNER,
) -> Scaffolded:
    """Create skill ``skill_id`` in ``skills_dir`` with its test in ``tests_dir``, and lock it.

    ``skills_dir`` must be the importable ``skills`` package (the manifest names the handler
    ``skills.<id>.handler``), as the repository's is. Raises ScaffoldError, having written
    nothing, when the id is taken, malformed or reserved, or the skill would not load.
    """
    _check_id(skill_id)
    name = _check_text("--name", name or skill_id.replace("_", " ").capitalize(), NAME_MAX)
    owner = _check_text("--owner", owner, NAME_MAX)
    if visibility not in VISIBILITIES:
        raise ScaffoldError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    chosen_scopes = _check_scopes(scopes)
    skills_dir, tests_dir = Path(skills_dir), Path(tests_dir)
    for label, folder in (("skills", skills_dir), ("tests", tests_dir)):
        if not folder.is_dir():
            raise ScaffoldError(f"{folder}: {label} directory not found")
    folder = skills_dir / skill_id
    test_path = tests_dir / f"test_skill_{skill_id}.py"
    for path in (folder, test_path):
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
        raise ScaffoldError(f"fix the registry first (netagent validate): {exc}") from None
    notes = [n for n in [_inventory_note(chosen_scopes)] if n]
    if locked is None:
        notes.append(
            f"{lock_path} did not exist; it now locks only {skill_id!r}: run "
            "`netagent validate --update-lock` to lock the others"
        )

    files = {
        "__init__.py": "",
        "manifest.json": _json(_manifest(skill_id, name, visibility, chosen_scopes, owner)),
        "input.schema.json": _json(INPUT_SCHEMA),
        "output.schema.json": _json(output_schema(skill_id)),
        f"{record_kind(skill_id)}.schema.json": _json(RECORD_SCHEMA),
        "handler.py": _handler(skill_id),
        "extract.py": EXTRACT,
    }
    changes = _Changes()
    try:
        folder.mkdir()
        changes.folder = folder
        for file, text in files.items():
            changes.create(folder / file, text)
        changes.create(test_path, _test(skill_id, visibility, chosen_scopes))
        importlib.invalidate_caches()
        entry = lock_entries(load_registry(skills_dir))[skill_id]
        entries = dict(locked or {})
        entries[skill_id] = entry
        changes.update(lock_path, json.dumps(entries, indent=2, sort_keys=True) + "\n")
    except (OSError, RegistryError, KeyError) as exc:
        changes.undo()
        reason = f"{type(exc).__name__}: {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ScaffoldError(f"the new skill does not load, so nothing was kept: {reason}") from None
    except BaseException:
        changes.undo()
        raise
    return Scaffolded(
        skill_id=skill_id,
        created=(*(folder / file for file in files), test_path),
        updated=tuple(path for path, _ in changes.updated),
        notes=tuple(notes),
    )


def next_steps(result: Scaffolded, *, visibility: str, owner: str) -> list[str]:
    """What to do after ``new_skill``, for people."""
    skill_id = result.skill_id
    steps = [
        f"run its test: .venv/bin/python -m pytest -q tests/test_skill_{skill_id}.py (needs the "
        "test extra: .venv/bin/pip install -q -e '.[test]')",
        f"replace the example in skills/{skill_id}/handler.py and extract.py, and the schemas "
        "beside them, keeping the test green",
        f"edit skills/{skill_id}/manifest.json: description, tags, examples, routing utterances "
        "(real requests, for the router), limits"
        + (", owner (--owner)" if owner == DEFAULT_OWNER else ""),
        f"after changing its schemas or limits, before it ships: drop '{skill_id}' from "
        "skills/interfaces.lock.json, then `netagent validate --update-lock` "
        "(docs/adding-a-skill.md, 'Changing it before it ships'); once shipped, bump "
        "skill_version instead",
        "check: netagent validate, then the whole suite "
        "(.venv/bin/python -m pytest -q -n 3 --dist loadgroup)",
        f"optionally, more plain names for 'describe ...' in its manifest's routing.aliases "
        f"(the id {skill_id} and its name already work)",
    ]
    if visibility == "public":
        steps.append(
            "it is public, so the public card changed: review `netagent card diff`, then "
            "`netagent card diff --update`"
        )
    return steps
