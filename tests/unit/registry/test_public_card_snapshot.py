"""The public card is a reviewed surface: any change must change the snapshot visibly."""

from __future__ import annotations

import json

from agent.cli.cards import SNAPSHOT, SNAPSHOT_BASE_URL, SNAPSHOT_GRPC_URL
from agent.registry.cards import CardFactory, card_to_json
from agent.registry.loader import load_registry
from netops.deployment import IDENTITY, SKILLS_DIR


def test_generated_public_card_matches_committed_snapshot() -> None:
    generated = card_to_json(
        CardFactory(
            load_registry(SKILLS_DIR),
            SNAPSHOT_BASE_URL,
            identity=IDENTITY,
            grpc_url=SNAPSHOT_GRPC_URL,
        ).public_card
    )
    committed = json.loads(SNAPSHOT.read_text())
    assert generated == committed, (
        "the public card changed; if intended, run `netagent card diff --update` and commit it"
    )
