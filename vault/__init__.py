"""MemVault vault: the files are the truth."""
