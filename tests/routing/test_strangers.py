"""The strangers' routing sets stay blind until spent: written outside the project, and held
out of training until measured.

``tests/routing/strangers/*.json`` were written by writers who saw nothing of the project (not
the router, its training text, nor any earlier set), from a brief naming only what each skill
does (its ``about`` says who and how). They measure the router as a stranger meets it
(``python -m bench.routing --set strangers/NAME``): once before a change to the router and once
after, then they are spent. A spent set may become training data: its texts are then in the
deployment's routing data (``TRAINED_ON``), except those equal to, inside or holding a text of a
set held out. These tests hold what keeps the held-out sets meaningful: the shape, labels that
name the deployment's skills, no text that is (or holds, or is held in) a training text of the
deployment, and nothing the agent runs that reads them. Accuracy is not asserted here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.registry.loader import load_registry
from agent.routing import classifier
from agent.routing.data import RoutingData
from tests.routing.test_heldout import copies, entries, normalized

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NETWORK_SKILLS = ROOT / "skills"
INVOICE_SKILLS = ROOT / "examples" / "invoices" / "skills"
SETS = {
    path.stem: INVOICE_SKILLS if "invoices" in path.stem else NETWORK_SKILLS
    for path in sorted((HERE / "strangers").glob("*.json"))
}
"""Each set (every file in ``strangers/``) and the skills folder of the deployment it is
written for: the invoice agent's when its name says ``invoices``, else the network agent's."""
TRAINED_ON = frozenset(
    {"netops_a", "netops_b", "netops_c", "netops_d", "dev_netops"}
    | {"netops_e", "netops_f", "netops_g", "netops_h", "netops_i", "netops_j"}
    | {"netops_k", "netops_l", "netops_m", "netops_n", "netops_o", "netops_p"}
    | {"invoices", "invoices_b", "dev_invoices", "invoices_c", "invoices_d", "invoices_e"}
    | {"netops_q", "netops_r", "netops_s", "netops_t", "netops_u", "netops_v"}
    | {"netops_w", "netops_x", "netops_y", "netops_z", "netops_aa", "netops_ab"}
    | {"invoices_f", "invoices_g", "invoices_h", "invoices_i", "invoices_j", "invoices_k"}
    | {"invoices_l", "invoices_m", "invoices_n", "invoices_o", "invoices_p"}
    | {"netops_ac", "netops_ad", "netops_ae", "netops_af"}
)
"""Spent sets folded into the deployments' routing data; every other set is held out of it."""
HELD_OUT = [name for name in SETS if name not in TRAINED_ON]
ROUTING_DATA = {
    NETWORK_SKILLS: ROOT / "netops" / "routing.json",
    INVOICE_SKILLS: ROOT / "examples" / "invoices" / "routing.json",
}
"""Each deployment's routing data (``Deployment.routing_data``), by its skills folder."""


def load_set(name: str) -> dict[str, Any]:
    """The stranger set ``name`` as its writer left it."""
    data: dict[str, Any] = json.loads((HERE / "strangers" / f"{name}.json").read_text("utf-8"))
    return data


def _training(skills_dir: Path) -> frozenset[str]:
    """Normalized text of every source the deployment's router learns from."""
    texts: list[str] = list(classifier.out_of_scope_texts())
    for manifest in load_registry(skills_dir).manifests:
        texts += classifier.training_texts(manifest)
        texts += manifest.aliases
    data = RoutingData.load(ROUTING_DATA[skills_dir])
    texts += [t for utterances in data.utterances.values() for t in utterances]
    texts += [t for reason in data.nothing_fits.values() for t in reason.texts]
    texts += data.out_of_scope
    texts += [t for group in data.ambiguous for t in group.texts]
    return frozenset(n for n in map(normalized, texts) if n)


each_set = pytest.mark.parametrize("name", list(SETS))


@each_set
def test_the_shape_and_every_label(name: str) -> None:
    data = load_set(name)
    skills = {m.id for m in load_registry(SETS[name]).manifests}
    assert data["version"] == 1 and data["about"]
    assert len(data["clear"]) >= 90 and len(data["ambiguous"]) >= 30
    assert len(data["out_of_scope"]) >= 45
    assert {e["skill"] for e in data["clear"]} <= skills
    for entry in data["ambiguous"]:
        assert len(set(entry["could_be"])) >= 2 and set(entry["could_be"]) <= skills, entry
    texts = [normalized(e["text"]) for e in entries(data)]
    assert len(texts) == len(set(texts))


@pytest.mark.parametrize("name", HELD_OUT)
def test_no_held_out_text_is_training_text(name: str) -> None:
    copied = copies([e["text"] for e in entries(load_set(name))], _training(SETS[name]))
    assert len(copied) == 0  # the count only: the texts are not to be read


@pytest.mark.parametrize("name", sorted(TRAINED_ON))
def test_a_trained_on_set_is_training_text(name: str) -> None:
    """Each text of a trained-on set is trained on, unless it would leak into a held-out set."""
    held_out = frozenset(
        normalized(e["text"])
        for other in HELD_OUT
        if SETS[other] == SETS[name]
        for e in entries(load_set(other))
    )
    texts = [e["text"] for e in entries(load_set(name))]
    kept_out = {text for text, _ in copies(texts, held_out)}
    training = _training(SETS[name])
    missing = [t for t in texts if t not in kept_out and normalized(t) not in training]
    assert len(missing) == 0


@each_set
def test_nothing_the_agent_runs_reads_the_set(name: str) -> None:
    readers = [
        str(path.relative_to(ROOT))
        for top in ("agent", "skills", "netops", "db", "examples")
        for path in sorted((ROOT / top).rglob("*.py"))
        if f"strangers/{name}" in path.read_text(encoding="utf-8")
        or f"{name}.json" in path.read_text(encoding="utf-8")
    ]
    assert not readers, readers
