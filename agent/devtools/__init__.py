"""Tools for people building or testing agents: the conformance checker, ``new-skill``'s
scaffold and its domain-free template, and a deployment's agent served for a test."""
