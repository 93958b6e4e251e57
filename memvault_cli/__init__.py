"""The `memvault` command: one parser and one dispatcher for every layer's commands.

Layers contribute explicitly (vault.cli.commands.layer, indexer.cli.commands.layer,
console.cli.layer); this
package sits above them all (imports flow vault <- indexer <- console <- memvault_cli) and
owns what every command shares: the options, `--version`, the exit codes (vault.errors),
and a quiet exit when the reader of a pipe goes away.
"""
