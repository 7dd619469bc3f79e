"""The registry: the demo skills load, stay frozen, and any bad manifest stops start-up.

Each broken case copies ``skills/`` into a temporary folder, breaks exactly one thing, and
checks that loading fails with a ``RegistryError`` naming the file and the field (JSON Pointer).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from agent.base.settings import Settings
from agent.interfaces import SCHEMAS_DIR
from agent.registry.loader import BUILTIN_SKILLS_DIR, RegistryError, load_registry
from agent.registry.manifest import Manifest, State, Visibility
from agent.registry.manifests import MANIFEST_SCHEMA, read_manifests
from netops.app import create_app
from netops.deployment import SKILLS_DIR
from tests.conftest import free_port
from tests.registry_view import DEMO_SKILLS


def copy_skills(tmp_path: Path) -> Path:
    """A private copy of the demo skills folder that a test may break."""
    target = tmp_path / "skills"
    shutil.copytree(SKILLS_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target.resolve()


def edit_manifest(root: Path, skill: str, change: Callable[[dict[str, Any]], None]) -> Path:
    path = root / skill / "manifest.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))
    return path


def load_error(root: Path) -> str:
    with pytest.raises(RegistryError) as caught:
        load_registry(root)
    return str(caught.value)


# -- the demo registry ------------------------------------------------------------------------


def test_demo_registry_has_the_seven_demo_skills() -> None:
    registry = load_registry(SKILLS_DIR)  # a fork's own skills may be there too
    folders = {p.parent.name for p in SKILLS_DIR.glob("*/manifest.json")}
    folders |= {p.parent.name for p in BUILTIN_SKILLS_DIR.glob("*/manifest.json")}
    assert "describe_skill" in folders  # the core's built-in, beside the deployment's skills
    assert len(registry) == len(folders)
    assert {c.id for c in registry} == folders
    assert folders >= DEMO_SKILLS
    assert [c.id for c in registry] == sorted(folders)  # iteration is in id order
    assert [m.id for m in registry.manifests] == sorted(folders)
    assert registry.get("no_such_skill") is None


def test_port_report_is_removed_and_names_lookup_inventory() -> None:
    capability = load_registry(SKILLS_DIR).get("port_report")
    assert capability is not None
    assert capability.manifest.state is State.REMOVED
    assert capability.manifest.replacement == "lookup_inventory"
    assert capability.manifest.visibility is Visibility.INTERNAL
    assert capability.handler is None
    assert capability.interface is None


def test_every_live_skill_has_a_handler_and_an_interface_of_its_own() -> None:
    registry = load_registry(SKILLS_DIR)
    live = [c for c in registry if c.manifest.state is not State.REMOVED]
    live_ids = {c.id for c in live}
    assert DEMO_SKILLS - {"port_report"} <= live_ids and "port_report" not in live_ids
    for capability in live:
        interface = capability.interface
        assert interface is not None, capability.id
        assert interface.skill_id == capability.id
        assert interface.skill_version == capability.manifest.interface["skill_version"]
        assert interface.interface_digest.startswith("sha256:")
        assert len(interface.interface_digest) == len("sha256:") + 64
        assert capability.handler is not None and callable(capability.handler.handle)
    digests = [c.interface.interface_digest for c in live if c.interface is not None]
    assert len(set(digests)) == len(digests)


def test_demo_manifest_fields() -> None:
    registry = load_registry(SKILLS_DIR)
    headroom = registry.get("link_headroom")
    plan = registry.get("plan_link_upgrade")
    lookup = registry.get("lookup_inventory")
    assert headroom is not None and plan is not None and lookup is not None
    assert headroom.manifest.state is State.DEPRECATED
    assert headroom.manifest.replacement == "check_link_capacity"
    assert plan.manifest.state is State.PREVIEW
    assert plan.manifest.tenants == frozenset({"acme"})
    assert plan.manifest.requires_scopes == frozenset({"capacity.plan"})
    assert lookup.manifest.visibility is Visibility.PUBLIC
    assert lookup.manifest.tenants is None  # "*"
    assert lookup.manifest.requires_scopes == frozenset({"inventory.read"})


def test_loading_twice_gives_the_same_interfaces(tmp_path: Path) -> None:
    first, second = load_registry(SKILLS_DIR), load_registry(copy_skills(tmp_path))
    assert [(c.id, c.interface) for c in first] == [(c.id, c.interface) for c in second]
    assert first.manifests == second.manifests  # the folder does not take part in equality


# -- immutability -----------------------------------------------------------------------------


def test_manifests_and_capabilities_are_frozen() -> None:
    capability = load_registry(SKILLS_DIR).get("lookup_inventory")
    assert capability is not None
    manifest = capability.manifest
    with pytest.raises(dataclasses.FrozenInstanceError):
        manifest.owner = "someone else"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        manifest.requires_scopes = frozenset()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        capability.interface = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        capability.handler = None  # type: ignore[misc]
    assert capability.interface is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        capability.interface.interface_digest = "sha256:" + "0" * 64  # type: ignore[misc]


def test_manifest_members_are_read_only_mappings_and_tuples() -> None:
    manifest = load_registry(SKILLS_DIR).get("check_link_capacity").manifest  # type: ignore[union-attr]
    assert isinstance(manifest.skill, MappingProxyType)
    assert isinstance(manifest.limits, MappingProxyType)
    assert isinstance(manifest.interface, MappingProxyType)
    assert isinstance(manifest.interface["input"], MappingProxyType)
    assert isinstance(manifest.tools, MappingProxyType)
    assert isinstance(manifest.skill["tags"], tuple)
    assert isinstance(manifest.requires_scopes, frozenset)
    assert isinstance(manifest.tools["inventory"], frozenset)
    with pytest.raises(TypeError):
        manifest.skill["description"] = "changed"  # type: ignore[index]
    with pytest.raises(TypeError):
        manifest.limits["max_records"] = 10**9  # type: ignore[index]
    with pytest.raises(TypeError):
        manifest.interface["input"]["file"] = "other.json"  # type: ignore[index]
    with pytest.raises(TypeError):
        manifest.tools["database"] = frozenset()  # type: ignore[index]
    with pytest.raises(AttributeError):
        manifest.skill["tags"].append("changed")  # type: ignore[attr-defined]
    assert manifest.limits["max_records"] == 600


def test_registry_mapping_is_a_proxy() -> None:
    registry = load_registry(SKILLS_DIR)
    by_id = registry._by_id
    assert isinstance(by_id, MappingProxyType)
    with pytest.raises(TypeError):
        by_id["evil"] = by_id["describe_skill"]  # type: ignore[index]
    assert "evil" not in by_id and len(registry) == len(by_id)


def test_manifest_does_not_share_state_with_its_source_json() -> None:
    path = SKILLS_DIR / "lookup_inventory" / "manifest.json"
    data = json.loads(path.read_text())
    manifest = Manifest.from_json(data, path.parent)
    data["skill"]["tags"].append("mutated")
    data["limits"]["max_items"] = 1
    data["requires_scopes"].append("admin")
    assert "mutated" not in manifest.skill["tags"]
    assert manifest.limits["max_items"] == 500
    assert manifest.requires_scopes == frozenset({"inventory.read"})


def test_interface_document_is_handed_out_as_a_fresh_copy() -> None:
    interface = load_registry(SKILLS_DIR).get("lookup_inventory").interface  # type: ignore[union-attr]
    assert interface is not None
    document = interface.document
    document["skill_id"] = "tampered"
    document["input_schema"]["resolution"]["schema"]["type"] = "array"
    again = interface.document
    assert again["skill_id"] == "lookup_inventory"
    assert again["input_schema"]["resolution"]["schema"]["type"] == "object"


# -- broken manifests -------------------------------------------------------------------------


def _write(relative: str, text: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        (root / relative).write_text(text)

    return change


def _manifest(skill: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        edit_manifest(root, skill, change)

    return apply


def _remove(relative: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        (root / relative).unlink()

    return change


def _remote_ref(root: Path) -> None:
    path = root / "lookup_inventory" / "input.schema.json"
    schema = json.loads(path.read_text())
    schema["properties"]["site"] = {"$ref": "https://schemas.example.net/site.json"}
    path.write_text(json.dumps(schema, indent=2))


def _set(**members: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.update(members)


def _drop(member: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.pop(member)


# (case, how to break the copy, file named, message prefix after "<file>: ", fragments)
BROKEN: list[tuple[str, Callable[[Path], None], str, str, tuple[str, ...]]] = [
    (
        "unknown-state",
        _manifest("lookup_inventory", _set(state="beta")),
        "lookup_inventory/manifest.json",
        "/state: ",
        ("'beta'",),
    ),
    (
        "missing-owner",
        _manifest("lookup_inventory", _drop("owner")),
        "lookup_inventory/manifest.json",
        "/owner: ",
        ("required",),
    ),
    (
        "unknown-top-level-member",
        _manifest("lookup_inventory", _set(colour="blue")),
        "lookup_inventory/manifest.json",
        "/colour: ",
        ("colour",),
    ),
    (
        "id-differs-from-folder",
        _manifest("lookup_inventory", _set(id="lookup_everything")),
        "lookup_inventory/manifest.json",
        "/id: ",
        ("'lookup_everything'", "'lookup_inventory'"),
    ),
    (
        "invalid-json",
        _write("lookup_inventory/manifest.json", '{"id": "lookup_inventory",\n  "state": }'),
        "lookup_inventory/manifest.json",
        "not valid JSON (line 2",
        (),
    ),
    (
        "handler-does-not-import",
        _manifest("lookup_inventory", _set(handler="skills.no_such_module.handler")),
        "lookup_inventory/manifest.json",
        "/handler: ",
        ("skills.no_such_module.handler",),
    ),
    (
        "handler-without-handle",
        _manifest("lookup_inventory", _set(handler="skills.lookup_inventory")),
        "lookup_inventory/manifest.json",
        "/handler: ",
        ("'skills.lookup_inventory'", "handle"),
    ),
    (
        "replacement-does-not-exist",
        _manifest("link_headroom", _set(replacement="check_link_bandwidth")),
        "link_headroom/manifest.json",
        "/replacement: ",
        ("'check_link_bandwidth'",),
    ),
    (
        "replacement-not-ga",
        _manifest("link_headroom", _set(replacement="plan_link_upgrade")),
        "link_headroom/manifest.json",
        "/replacement: ",
        ("'plan_link_upgrade'", "preview", "not ga"),
    ),
    (
        "removed-replacement-not-ga",
        _manifest("port_report", _set(replacement="link_headroom")),
        "port_report/manifest.json",
        "/replacement: ",
        ("'link_headroom'", "deprecated", "not ga"),
    ),
    (
        "deprecated-without-replacement",
        _manifest("link_headroom", _drop("replacement")),
        "link_headroom/manifest.json",
        "/replacement: ",
        ("required",),
    ),
    (
        "live-skill-without-interface",
        _manifest("check_link_capacity", _drop("interface")),
        "check_link_capacity/manifest.json",
        "/interface: ",
        ("required",),
    ),
    (
        "bad-skill-version",
        _manifest(
            "check_link_capacity",
            lambda d: d["interface"].update(skill_version="1.0.0"),
        ),
        "check_link_capacity/manifest.json",
        "/interface/skill_version: ",
        ("'1.0.0'",),
    ),
    (
        "remote-ref-in-embedded-schema",
        _remote_ref,
        "lookup_inventory/manifest.json",
        "/interface: ",
        (
            "invalid interface",
            "/input_schema/resolution/schema/properties/site/$ref",
            "https://schemas.example.net/site.json",
        ),
    ),
]


@pytest.mark.parametrize(
    ("breakage", "named_file", "prefix", "fragments"),
    [pytest.param(*case[1:], id=case[0]) for case in BROKEN],
)
def test_a_broken_manifest_stops_loading_naming_file_and_field(
    tmp_path: Path,
    breakage: Callable[[Path], None],
    named_file: str,
    prefix: str,
    fragments: tuple[str, ...],
) -> None:
    root = copy_skills(tmp_path)
    breakage(root)
    message = load_error(root)
    assert message.startswith(f"{root / named_file}: {prefix}"), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_a_missing_schema_file_names_that_file_and_the_interface_member(tmp_path: Path) -> None:
    root = copy_skills(tmp_path)
    _remove("lookup_inventory/output.schema.json")(root)
    message = load_error(root)
    schema = root / "lookup_inventory" / "output.schema.json"
    assert message == f"{schema} (/interface/output): file not found"


def test_a_missing_record_schema_names_the_record_kind(tmp_path: Path) -> None:
    root = copy_skills(tmp_path)
    _remove("check_link_capacity/link-utilization-sample.schema.json")(root)
    message = load_error(root)
    schema = root / "check_link_capacity" / "link-utilization-sample.schema.json"
    assert message.startswith(f"{schema} (/interface/records/link-utilization-sample): ")
    assert "file not found" in message


@pytest.mark.parametrize(
    ("module", "source"),
    [
        pytest.param("netops_test_handler_raises", "raise RuntimeError('boom')\n", id="raises"),
        pytest.param("netops_test_handler_syntax", "def handle(:\n    pass\n", id="syntax-error"),
    ],
)
def test_a_handler_that_fails_while_importing_is_a_registry_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str
) -> None:
    """A handler module that exists but breaks on import is a bad manifest too, not a crash."""
    code = tmp_path / "code"
    code.mkdir()
    (code / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(code))
    root = copy_skills(tmp_path)
    manifest = edit_manifest(root, "lookup_inventory", _set(handler=module))
    try:
        message = load_error(root)
    finally:
        sys.modules.pop(module, None)
    assert message.startswith(f"{manifest}: /handler: "), message
    assert module in message


def test_an_empty_skills_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    message = load_error(tmp_path / "empty")
    assert message.startswith(str((tmp_path / "empty").resolve()))
    assert "no skills found" in message


def test_a_missing_skills_folder_is_refused(tmp_path: Path) -> None:
    message = load_error(tmp_path / "nowhere")
    assert message == f"{(tmp_path / 'nowhere').resolve()}: skills directory not found"


# -- the manifests alone (netagent usage) -----------------------------------------------------

RUNS_SOMETHING = {
    "handler-does-not-import",
    "handler-without-handle",
    "remote-ref-in-embedded-schema",
}
"""The cases only importing a handler or building an interface finds."""


def test_the_manifests_alone_are_the_registrys_manifests() -> None:
    manifests = read_manifests(SKILLS_DIR)
    assert list(manifests) == [c.id for c in load_registry(SKILLS_DIR)]  # id order
    assert tuple(manifests.values()) == load_registry(SKILLS_DIR).manifests
    assert MANIFEST_SCHEMA.resolve() == SCHEMAS_DIR / "capability-manifest.schema.json"


@pytest.mark.parametrize(
    "breakage", [pytest.param(c[1], id=c[0]) for c in BROKEN if c[0] not in RUNS_SOMETHING]
)
def test_the_manifests_alone_stop_on_what_stops_loading(
    tmp_path: Path, breakage: Callable[[Path], None]
) -> None:
    root = copy_skills(tmp_path)
    breakage(root)
    with pytest.raises(RegistryError) as caught:
        read_manifests(root)
    assert str(caught.value) == load_error(root)


@pytest.mark.parametrize(
    "breakage", [pytest.param(c[1], id=c[0]) for c in BROKEN if c[0] in RUNS_SOMETHING]
)
def test_the_manifests_alone_import_no_handler_and_build_no_interface(
    tmp_path: Path, breakage: Callable[[Path], None]
) -> None:
    root = copy_skills(tmp_path)
    breakage(root)
    assert "lookup_inventory" in read_manifests(root)
    assert load_error(root)


def test_the_manifests_alone_refuse_a_missing_or_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "empty", tmp_path / "nowhere"):
        with pytest.raises(RegistryError) as caught:
            read_manifests(folder)
        assert str(caught.value) == load_error(folder)


# -- start-up stops on a bad registry ---------------------------------------------------------


def test_create_app_refuses_a_broken_skills_folder(tmp_path: Path) -> None:
    root = copy_skills(tmp_path)
    manifest = edit_manifest(root, "lookup_inventory", _drop("owner"))
    with pytest.raises(RegistryError) as caught:
        create_app(Settings(home=tmp_path / "home", skills_dir=root, seed_on_start=False))
    assert str(caught.value).startswith(f"{manifest}: /owner: ")


@pytest.fixture(scope="module")
def broken_serve(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """`netagent serve` once, against a skills copy whose lookup_inventory has no owner."""
    tmp = tmp_path_factory.mktemp("broken-serve")
    root = copy_skills(tmp)
    manifest = edit_manifest(root, "lookup_inventory", _drop("owner"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env.pop("COLUMNS", None)  # what a service manager or CI log gives: no terminal width
    env.update(
        NETAGENT_HOME=str(tmp / "home"),
        NETAGENT_SKILLS_DIR=str(root),
        NETAGENT_PORT=str(free_port()),  # never bound: the registry must stop start-up first
    )
    netagent = Path(sys.executable).with_name("netagent")
    run = subprocess.run(
        [str(netagent), "serve"], env=env, capture_output=True, text=True, timeout=30
    )
    return manifest, run


def test_serve_with_a_broken_registry_exits_non_zero(broken_serve) -> None:
    manifest, run = broken_serve
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    unwrapped = run.stderr.replace("\n", "")
    assert "registry: " in unwrapped
    assert f"{manifest}: /owner: " in unwrapped, run.stderr
    assert "export " not in run.stdout  # no demo tokens for an agent that never started


def test_serve_with_a_broken_registry_prints_the_file_name_unbroken(broken_serve) -> None:
    """The path must be findable verbatim (grep, copy-paste) in stderr, not folded at 80."""
    manifest, run = broken_serve
    assert run.returncode == 2
    assert str(manifest) in run.stderr, run.stderr


def test_serve_refuses_an_exchange_url_without_a_credential(tmp_path: Path) -> None:
    """A setting that cannot work stops `serve` with a one-line error, not a traceback."""
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "NETAGENT_HOME": str(tmp_path),
        "NETAGENT_TOKEN_EXCHANGE_URL": "http://127.0.0.1:9/oauth/token",
    }
    env.pop("NETAGENT_AGENT_CREDENTIAL", None)
    run = subprocess.run(
        [sys.executable, "-c", "from netops.cli import main; main()", "serve", "--port", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 2
    assert "NETAGENT_AGENT_CREDENTIAL" in run.stderr and "Traceback" not in run.stderr
