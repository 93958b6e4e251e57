"""The paragraph each of the vault layer's commands opens its `--help` with (CommandSpec
.description): what it does, what it prints, and its exit code when it is not just 0 (done)
or 2 (bad usage, no such memory or chat). `--json` prints the same as data."""

from __future__ import annotations

_ALREADY = (
    "Asking for the state a memory already has is no error: it prints `ID already "
    "{state}: nothing changed` and exits 0, writing nothing."
)

ABOUT: dict[str, str] = {
    "init": (
        "Create a vault at PATH (default --vault, else ./memory): the bots/ and .memvault/ "
        "folders, a .gitignore, a README and a git repository with a first commit. Files "
        "already there are kept; prints what it created."
    ),
    "list": (
        "List the memories of one chat (--bot/--session), newest first, 10 a page: one line "
        "each with id, date, importance, status, tags, speaker and text, then the page "
        "count. Filters narrow it before paging."
    ),
    "show": "Print one memory in full: each front-matter field as words, then its text.",
    "forget": (
        "Delete one memory's file and commit that; git history keeps it (`git log -- PATH`). "
        "Changes git did not hold yet are committed first, and the commit is named; a file "
        "holding what looks like a secret is never committed: its copy is kept outside git "
        "in .memvault/forgotten/ (the reply says where)."
    ),
    "restore": (
        "Make an archived or superseded memory active again, so recall finds it; prints `ID "
        "active`. While a newer memory replaces it (its superseded_by, or a newer active "
        "memory of its key) it goes back to superseded instead, and the reply says so. "
        + _ALREADY.format(state="active")
    ),
    "profile": (
        "Show or edit the chat's profile, or with --speaker one person's: set/add/remove "
        "name, traits, preferences or notes (--fact-key makes a slot that a new value "
        "replaces). While a speaker profile has no name, an edit also writes one: "
        "--speaker-name, else the name the speaker's newest memory here was saved with; a "
        "name already there is never changed. Prints the profile."
    ),
    "check": (
        "Validate every file of the vault, changing nothing: prints `path:line: problem` "
        "for each bad file and a summary. Exits 1 when it found problems or git commits "
        "keep failing."
    ),
    "export": (
        "Print one chat's profiles and memories as JSON (or write it to --out). A file that "
        "cannot be read is left out, named under `unreadable` and on stderr: exit 1."
    ),
    "import": (
        "Import JSON from `memvault export`, the console or LongTermMemory into one chat; "
        "items already there are skipped, so importing twice adds nothing. Prints the counts; "
        "an item that cannot be read is refused with what to fix (stderr, exit 1) and the "
        "rest is imported. --dry-run writes nothing."
    ),
    "migrate": (
        "Bring every chat of a LongTermMemory installation in one go, read-only from "
        "LangBot's data folder: profiles from langbot.db, memories from Chroma. Prints per "
        "chat what is new, already imported and refused; a second run adds nothing. "
        "Exit 1 when something was refused or could not be read."
    ),
    "verify": (
        "Mark one memory as confirmed by a person (verified: true); prints `ID verified`. "
        + _ALREADY.format(state="verified")
    ),
    "delete": (
        "Delete one memory by id, or every memory of the chat that --speaker/--tag/--before/"
        "--status pick: without --yes it only previews (the count and the first 10); with "
        "--yes it deletes them in one commit. Exits 1 if it had to stop partway."
    ),
    "archive": (
        "Archive one memory by id (hidden from recall, the file kept), or with filters every "
        "memory they pick (a preview; --yes applies). " + _ALREADY.format(state="archived")
    ),
    "stats": (
        "Count one chat's memories by status, category, priority, verified and speaker; the "
        "oldest and newest, the expired, and the files that could not be read."
    ),
    "sync": (
        "Pull and push the vault through a git remote (REMOTE, else the vault's git remote "
        "`origin`, set once with --set-remote): a fast-forward when possible, a merge commit "
        "otherwise. Memories added on both replicas are all kept; a file changed on both "
        "keeps the remote's version at its path and this one's beside it as "
        "NAME.conflict-HASH (reported by check, status and Health): exit 1. Refuses (exit 3) "
        "while files under bots/ have changes git does not hold; exit 4 when the remote "
        "cannot be reached."
    ),
    "events": (
        "A person's key events (appointments, orders, ...): list them, show one, or close "
        "one with a resolution (audited and committed like the plugin's close_event)."
    ),
}
