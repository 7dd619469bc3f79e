"""Governance at the cost of the bare SDK, measured side by side (issue 9). Prints; asserts nothing.

    .venv/bin/python -m bench.perf                      # the table: reference, SQLite, PostgreSQL
    .venv/bin/python -m bench.perf --startup            # start-up, component by component
    .venv/bin/python -m bench.perf --memory 50000       # server RSS over that many invocations
    .venv/bin/python -m bench.perf --scale large        # p50 on 100,000 links vs the demo data
    .venv/bin/python -m bench.perf --profile DIR        # py-spy on the server under load

See docs/benchmarks.md for what each figure means and the figures of the last run.
"""
