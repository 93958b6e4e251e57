"""Search and injection latency at scale (issue 5, item 3): `python -m bench.scale`."""
