"""Index build throughput, warm restart and provider-change rebuild (issue 5, item 4)."""
