"""The governed request path: request handler, executor and the skill context."""
