"""Helpers shared by the skills: pure text parsers for argument extraction (``text``).

Not a skill: the registry only loads folders that hold a ``manifest.json``.
"""
