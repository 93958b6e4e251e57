"""Write -> searchable latency of the vault watcher, and its start-up cost.

`python -m bench.sync [--episodes N] [--samples S]`: see `bench/sync/__main__.py`.
"""
