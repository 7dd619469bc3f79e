"""ASGI middleware at the edge: authentication, body limits, extensions, error scrubbing."""
