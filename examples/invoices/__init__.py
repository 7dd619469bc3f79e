"""An invoice-reconciliation agent: the core's second deployment, sharing nothing with networks.

``python -m examples.invoices serve`` runs it from the repository root with the same commands
and options as ``netagent``. It is what docs/forking.md walks through.
"""
