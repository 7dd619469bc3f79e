"""``validate`` and ``new-skill``: the registry's skills, checked offline or one more
written from the deployment's template."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from agent.cli.common import (
    app,
    cli_settings,
    console,
    current_deployment,
    current_factory,
    fail,
    skills_dir_of,
)
from agent.cli.exit_codes import ExitCode


@app.command("validate")
def validate_command(
    update_lock: Annotated[
        bool,
        typer.Option(
            "--update-lock", help="Record the current interfaces as released (after a bump)."
        ),
    ] = False,
) -> None:
    """Check the whole registry offline and print every problem with its file and JSON Pointer.

    Manifests, schemas, interface documents, digests, record kinds, lifecycle pointers, and
    the interface lock (a contract never changes without a version bump).
    """
    from agent.registry.loader import validate_registry
    from agent.registry.versioning import LOCK_FILE, lock_problems, write_lock

    skills_dir = skills_dir_of(cli_settings())
    lock = skills_dir / LOCK_FILE
    registry, problems = validate_registry(skills_dir)
    if registry is not None:
        problems += lock_problems(registry, lock)
    if registry is not None and update_lock:
        # Only what a release may record: new skills, and changes that carry the right bump.
        recordable = ("not locked yet", "missing;", "is not recorded yet", "no longer in the")
        blocking = [p for p in problems if not any(mark in p for mark in recordable)]
        if blocking:
            print("the lock was not updated:", file=sys.stderr)
        else:
            console.print(f"wrote {write_lock(registry, lock)}")
            problems = lock_problems(registry, lock)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        raise typer.Exit(code=ExitCode.FAILED)
    console.print(f"registry valid: {len(registry or [])} skills, interfaces match the lock")


@app.command("new-skill")
def new_skill_command(
    skill_id: Annotated[
        str, typer.Argument(metavar="ID", help="The new skill's id, e.g. weekly_report.")
    ],
    name: Annotated[
        str | None, typer.Option(help="Its display name (default: from the id).")
    ] = None,
    visibility: Annotated[
        str, typer.Option(help="public | extended (listed only to entitled callers).")
    ] = "extended",
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope", help="A scope callers need; repeat for more (default: the template's)."
        ),
    ] = None,
    owner: Annotated[str | None, typer.Option(help="The owning team.")] = None,
) -> None:
    """Create a working skill (manifest, schemas, handler, extractor), its test, and its lock entry.

    From the deployment's own template if it offers one, else the core's domain-free one.
    Refuses (exit 2, nothing written) an id that exists, is malformed or is reserved.
    """
    from agent.devtools.scaffold import DEFAULT_OWNER, ScaffoldError, new_skill, next_steps
    from agent.devtools.text_skill import TextSkillTemplate

    deployment = current_deployment()
    skills_dir = skills_dir_of(cli_settings())
    try:
        result = new_skill(
            skill_id,
            skills_dir,
            skills_dir.parent / "tests",
            deployment.scaffold or TextSkillTemplate(),
            name=name,
            visibility=visibility,
            scopes=scope,
            owner=owner or DEFAULT_OWNER,
            agent_name=deployment.identity.name,
            factory=current_factory(),
        )
    except ScaffoldError as exc:
        raise fail(str(exc)) from None
    here = Path.cwd()
    for path in result.created:
        print(f"created {path.relative_to(here) if path.is_relative_to(here) else path}")
    for path in result.updated:
        print(f"updated {path.relative_to(here) if path.is_relative_to(here) else path}")
    for note in result.notes:
        print(f"note: {note}")
    print("next steps:")
    steps = next_steps(
        result, command=_program(), visibility=visibility, owner=owner or DEFAULT_OWNER, root=here
    )
    for number, step in enumerate(steps, start=1):
        print(f"  {number}. {step}")


def _program() -> str:
    """How this command line was started, for the steps it prints (``netagent``,
    ``python -m examples.invoices``)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        return f"python -m {spec.name.removesuffix('.__main__')}"
    program = Path(sys.argv[0]).name if sys.argv else ""
    return program if program and not program.startswith("-") else "netagent"
