"""The core's own storage: engine, column types, audit, task bindings, the task store."""
