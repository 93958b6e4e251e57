"""Benchmarks for MemVault: run as modules (`python -m bench.sync`), never collected by pytest."""
