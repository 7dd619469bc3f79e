"""Choosing a skill for a message that names none: router, classifier, explicit requests."""
