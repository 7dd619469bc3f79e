"""What every part of the core stands on: the error root (``errors``), the settings and the
parsers of their environment variables (``settings``, ``config``), and random identifiers
(``ids``).

Each of these is read by packages of every layer (security and edge at the bottom, the app and
the command line at the top), so they live in a package that imports nothing of the core: any
other home would close an import cycle between units (``tests/test_architecture.py``, rule 4).
"""
