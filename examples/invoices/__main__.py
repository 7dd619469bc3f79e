"""``python -m examples.invoices``: the core's command line, run for the invoice deployment."""

from agent.cli import run
from examples.invoices.deployment import IDENTITY, invoice_deployment

if __name__ == "__main__":
    run(
        invoice_deployment,
        factory="examples.invoices.deployment:invoice_deployment",
        identity=IDENTITY,
    )
