"""How deep and how large data from outside may be, for every JSON and YAML reader.

One place, so the CLI's import, the console's request bodies, the plugin's uploads and chat
commands, a model's answer and a hand-written file's front matter all refuse the same
shapes with a message (vault.format.jsonin for JSON, vault.format.yamlio for YAML) instead of
running out of stack (Python's recursion limit is about 1,000 frames, and a parser, a redaction pass
or a YAML writer each recurse once per level).
"""

from __future__ import annotations

# Levels of nesting in a YAML document (a file's front matter or profile): a person writes
# 2 or 3; aliases or a generator write thousands.
MAX_YAML_DEPTH = 32
# A JSON value may wrap such data in its envelope (export object, `episodes` list, item,
# `extra`, field), so an export of any readable file imports again.
MAX_JSON_DEPTH = MAX_YAML_DEPTH + 8
# Values in one YAML document once its aliases (*name) are expanded: a file of a few
# hundred lines builds a few thousand; "billion laughs" builds billions.
MAX_YAML_NODES = 100_000
# Bytes of one memory file (an episode, a profile, a candidate, a key event). One memory
# is at most 20,000 characters; a file of megabytes is a document or garbage, and reading,
# scanning for secrets and indexing it would hold `check` or the watcher for minutes.
MAX_FILE_BYTES = 1_000_000
# Bytes of one file `memvault import` reads: an export of 100,000 memories is about 100 MB;
# past this it would be read whole into memory only to fail there.
MAX_IMPORT_BYTES = 200_000_000
# Digits of one JSON number: no field takes more (importance 1..5, confidence 0..1); Python
# itself refuses to read an integer of 4,300 digits or more.
MAX_NUMBER_DIGITS = 40
