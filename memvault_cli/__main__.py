"""`python -m memvault_cli ...`: the same as the `memvault` console script."""

from memvault_cli.main import run

run()
