"""The core's own storage: engine, column types, its tables and their migrations, audit, task
bindings, the task store."""
