"""The core's schema revisions, written by hand and reviewed like code."""
