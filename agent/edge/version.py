"""The A2A version a request asks for: the ``A2A-Version`` header, or the query parameter.

A2A 1.0 lets a client send the version as the ``A2A-Version`` query parameter instead of the
header. The SDK's version check (``a2a.utils.version_validator``, run by both HTTP adapters)
reads only ``ServerCallContext.state['headers']`` and takes a request without the header for
0.3; the context builder (agent/app/transports.py) fills that header from the query
parameter here, so the SDK's one check serves both spellings and answers a bad value with
the binding's ``VERSION_NOT_SUPPORTED`` as it does for the header.

A header with a value wins over the parameter; an empty header counts as absent. Repeated
parameters that disagree are not a version (the check refuses them), the same ones repeated
are that version.

A value longer than any version (``MAX_VERSION_CHARS``) is replaced by one that parses as no
version before the check sees it: ``packaging``'s ``Version`` turns its digits into ints, and
past 4,300 digits Python raises ``ValueError`` with its own text, which the SDK's check does
not catch (a 500, -32603 or gRPC UNKNOWN quoting ``sys.set_int_max_str_digits()``). Replaced,
it is refused as every unsupported version is, with ``VERSION_NOT_SUPPORTED``.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

from a2a.utils.constants import VERSION_HEADER

VERSION_PARAMETER = VERSION_HEADER  # the spec spells the parameter as the header: A2A-Version
_KEY = VERSION_HEADER.lower()  # the SDK's builder keeps the headers with lower-case names
MAX_VERSION_CHARS = 32
"""Far more than ``major.minor.patch`` needs, far fewer digits than Python refuses to read."""
NO_VERSION = "unsupported"
"""What an overlong value becomes: not a version, so the check refuses it."""


def lift_version_parameter(headers: MutableMapping[str, str], parameters: Sequence[str]) -> None:
    """Put the version from the query parameter(s) into ``headers`` when no header has one."""
    if headers.get(_KEY) or not parameters:
        return
    values = set(parameters)
    headers[_KEY] = parameters[0] if len(values) == 1 else ",".join(sorted(values))


def bound_version(headers: MutableMapping[str, str]) -> None:
    """Replace a version value too long to be one (see the module docstring) in ``headers``."""
    value = headers.get(_KEY)
    if value is not None and len(value) > MAX_VERSION_CHARS:
        headers[_KEY] = NO_VERSION
