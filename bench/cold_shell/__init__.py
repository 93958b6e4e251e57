"""`memvault search` and `remember` from a cold shell, as real subprocesses of the entry point."""
