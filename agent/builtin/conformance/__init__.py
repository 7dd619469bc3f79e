"""The conformance skills folder: internal skills that answer a test kit's scenario messages.

Only ``netagent serve --conformance`` (NETAGENT_CONFORMANCE) loads this folder as a skills
directory; ``agent/server/conformance.py`` plays what its skills return.
"""

from __future__ import annotations

from pathlib import Path

CONFORMANCE_SKILLS_DIR = Path(__file__).resolve().parent
