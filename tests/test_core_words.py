"""The core (``agent/``) holds no word of the network domain: a fork keeps it as it is.

Every file under ``agent/`` (code, comments, templates, static files, JSON) is read for the
network deployment's words and names; each occurrence fails the test with its file and line.

The list is the network agent's vocabulary: ``network(s)``, ``inventory``, ``device(s)``,
``bandwidth``, ``utilization``, ``telemetry`` (as a word: OpenTelemetry, the tracing library,
is not the network's telemetry), ``netops`` (the deployment's package and brand), and the demo
data's site ids and link-id prefix (``nyc1``, ``lon1``, ``sin1``, ``fra1``, ``sfo1``,
``acme-lnk``). Left out on purpose, because the core owns them in another sense: the A2A router
("Router", "routing"), a schema "interface", a "link" in the HTML/HTTP sense, a "topology" as a
generic graph the console draws, the "capacity" of a queue or pool, CSS's ``device-width``, the
a2a-sdk's module ``a2a.utils.telemetry``, and the draft's home
(``agentic-network-management.github.io``, the name of the specification the core implements) and
the a2a-sdk client's text for a failed connection ("Network communication error"), which the core's
JSON-RPC client repeats word for word. Names are split into words (``NetworkFeatures``,
``live_telemetry``). The ``NETAGENT_*`` environment-variable prefix and the ``netagent.*`` span and
log attribute names are the settings' and the observability's namespace, not a network word, and are
not matched ("netagent" is not in the list).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

AGENT = Path(__file__).resolve().parent.parent / "agent"
NETWORK_WORDS = re.compile(
    r"(?<![A-Za-z])(?:networks?|inventory|inventories|devices?|bandwidth|utili[sz]ation"
    r"|telemetry|netops|nyc1|lon1|sin1|fra1|sfo1|acme-lnk)(?![A-Za-z])",
    re.IGNORECASE,
)
"""Whole words, in any case; names are split into words first (``NetworkFeatures`` and
``network_view`` count), and OpenTelemetry and CSS's ``device-width`` are not the network's."""
NOT_THE_NETWORKS = re.compile(
    r"open[-_ ]?telemetry|device-width|a2a\.utils import telemetry|agentic-network-management"
    r"|Network communication error",
    re.IGNORECASE,
)
WORD_JOINS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|_")


def network_words(text: str) -> list[str]:
    """The network words in ``text``, as found (for a message that names them)."""
    words = WORD_JOINS.sub(" ", NOT_THE_NETWORKS.sub(" ", text))
    return [match.group(0) for match in NETWORK_WORDS.finditer(words)]


def core_files() -> list[Path]:
    """Every text file of the core, generated caches aside, through its symbolic links too
    (``agent/_schemas`` is the repository's ``schemas/``, shipped inside the package)."""
    found = []
    for folder, _, names in os.walk(AGENT, followlinks=True):
        if "__pycache__" not in Path(folder).parts:
            found += [Path(folder) / name for name in names if not name.endswith(".pyc")]
    return sorted(found)


def test_the_word_list_catches_the_network_and_spares_the_cores_own_words() -> None:
    caught = "NetworkFeatures, the network's devices, bandwidth utilization; netops nyc1 acme-lnk"
    assert network_words(caught) == [
        "Network",
        "network",
        "devices",
        "bandwidth",
        "utilization",
        "netops",
        "nyc1",
        "acme-lnk",
    ]
    spared = "OpenTelemetry, opentelemetry; the Router's topology links an interface; device-width"
    assert network_words(spared) == []


def test_the_core_holds_no_word_of_the_network() -> None:
    found: dict[str, list[str]] = {}
    for path in core_files():
        name = path.relative_to(AGENT.parent).as_posix()
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if words := network_words(line):
                found.setdefault(name, []).append(f"{name}:{number}: {', '.join(words)}")
    lines = [line for name_lines in found.values() for line in name_lines]
    assert not lines, "network words in agent/:\n" + "\n".join(lines)
