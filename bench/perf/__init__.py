"""Governance at the cost of the bare SDK, side by side. Prints; asserts nothing.

    .venv/bin/python -m bench.perf                      # the table, the targets, N processes
    .venv/bin/python -m bench.perf --startup            # start-up, component by component
    .venv/bin/python -m bench.perf --memory 50000       # server RSS over that many invocations
    .venv/bin/python -m bench.perf --scale large        # p50 on 100,000 links vs the demo data
    .venv/bin/python -m bench.perf --profile DIR        # py-spy on the server under load

The table: each governed cell (SQLite, then PostgreSQL in the replica-safe configuration) right
after two references, the bare SDK echo (bench/echo_agent.py) on the SDK's InMemoryTaskStore
and on its DatabaseTaskStore over aiosqlite, with ours divided by each; an answer counts only
when its task is COMPLETED with its result (bench/perf/answers.py), anything else is an error.
Then the performance targets (bench/perf/targets.py), met or missed, and the multi-process cell: N
`netagent serve` replicas on one PostgreSQL, server CPU per request for each N
(bench/perf/scaleout.py).

See docs/benchmarks.md for what each figure means and the figures of the last run.
"""
