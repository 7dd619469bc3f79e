"""Nobody changes a contract silently: the interface lock and the version-bump rule.

``skills/interfaces.lock.json`` records, per skill, the ``skill_version`` and
``interface_digest`` last released, plus the top-level shape of its schemas. A digest that
changes without a version bump is a problem; so is a minor bump for a breaking change (the
draft's rule: breaking -> major + 1 with minor 0, backward-compatible -> minor + 1).

Breaking, as judged here from the recorded shapes: an input member that becomes required or
disappears, an output member or required output member that disappears, a record kind that
disappears. Anything subtler (a narrowed enum, a tightened pattern) is the author's call, so
it is reported as needing a bump but accepted as minor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent.registry.loader import Registry

LOCK_FILE = "interfaces.lock.json"


def _shape(schema: Any) -> dict[str, list[str]]:
    schema = schema if isinstance(schema, dict) else {}
    return {
        "properties": sorted(schema.get("properties", {})),
        "required": sorted(schema.get("required", [])),
    }


def lock_entries(registry: Registry) -> dict[str, dict[str, Any]]:
    """What the lock records for the current registry."""
    entries: dict[str, dict[str, Any]] = {}
    for capability in registry:
        interface = capability.interface
        if interface is None:
            continue
        document = interface.document
        entries[capability.id] = {
            "skill_version": interface.skill_version,
            "interface_digest": interface.interface_digest,
            "input": _shape(document["input_schema"]["resolution"]["schema"]),
            "output": _shape(document["output_schema"]["resolution"]["schema"]),
            "record_kinds": sorted(document["supporting_record_schemas"]),
        }
    return entries


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def is_next_version(old: str, new: str) -> bool:
    """``new`` is the next minor or the next major of ``old`` (the draft's rule)."""
    (old_major, old_minor), (major, minor) = _version(old), _version(new)
    return (major, minor) in ((old_major + 1, 0), (old_major, old_minor + 1))


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What in ``new`` would break a client written against ``old``."""
    changes = []
    newly_required = set(new["input"]["required"]) - set(old["input"]["required"])
    changes += [f"input member {m!r} became required" for m in sorted(newly_required)]
    gone = set(old["input"]["properties"]) - set(new["input"]["properties"])
    changes += [f"input member {m!r} was removed" for m in sorted(gone)]
    gone = set(old["output"]["properties"]) - set(new["output"]["properties"])
    changes += [f"output member {m!r} was removed" for m in sorted(gone)]
    gone = set(old["output"]["required"]) - set(new["output"]["required"])
    changes += [f"output member {m!r} is no longer always present" for m in sorted(gone)]
    gone = set(old["record_kinds"]) - set(new["record_kinds"])
    changes += [f"record kind {k!r} was removed" for k in sorted(gone)]
    return changes


def lock_problems(registry: Registry, lock_path: Path) -> list[str]:
    """Every way the registry departs from the lock without the version saying so."""
    path = lock_path
    try:
        locked: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [f"{path}: missing; create it with `netagent validate --update-lock`"]
    except json.JSONDecodeError as exc:
        return [f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})"]
    problems = []
    for skill_id, entry in lock_entries(registry).items():
        pointer = f"{path}: /{skill_id}"
        old = locked.get(skill_id)
        if old is None:
            problems.append(f"{pointer}: not locked yet; run `netagent validate --update-lock`")
            continue
        if old["interface_digest"] == entry["interface_digest"]:
            if old["skill_version"] != entry["skill_version"]:
                problems.append(f"{pointer}/skill_version: bumped, but the interface is unchanged")
            continue
        if old["skill_version"] == entry["skill_version"]:
            problems.append(
                f"{pointer}/interface_digest: the interface changed but skill_version is still "
                f"{entry['skill_version']}; bump it (minor if compatible, major if breaking)"
            )
            continue
        (old_major, old_minor), (major, _) = (
            _version(old["skill_version"]),
            _version(entry["skill_version"]),
        )
        if not is_next_version(old["skill_version"], entry["skill_version"]):
            problems.append(
                f"{pointer}/skill_version: {old['skill_version']} -> {entry['skill_version']} is "
                f"not the next minor ({old_major}.{old_minor + 1}) or major ({old_major + 1}.0)"
            )
            continue
        breaking = breaking_changes(old, entry)
        if breaking and major == old_major:
            problems.append(
                f"{pointer}/skill_version: breaking change needs {old_major + 1}.0: "
                + "; ".join(breaking)
            )
        else:
            problems.append(
                f"{pointer}: {old['skill_version']} -> {entry['skill_version']} is not recorded "
                "yet; run `netagent validate --update-lock` to release it"
            )
    live = set(lock_entries(registry))
    problems += [
        f"{path}: /{gone}: locked but no longer in the registry (remove it from the lock)"
        for gone in sorted(set(locked) - live)
    ]
    return problems


def write_lock(registry: Registry, lock_path: Path) -> Path:
    """Record the current interfaces as released."""
    path = lock_path
    path.write_text(json.dumps(lock_entries(registry), indent=2, sort_keys=True) + "\n")
    return path
