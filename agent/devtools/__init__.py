"""Tools for people building or testing agents: the conformance checker."""
