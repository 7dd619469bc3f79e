"""Skills that ship with the core rather than with a deployment."""
