"""Drives basic-memory (PyPI) in its keyword/FTS mode. Runs under basic-memory's own Python
(>= 3.12, a separate venv), NOT the project venv; bench.peers starts it as a subprocess.

    python basic_memory_driver.py EPISODES.jsonl QUERIES.jsonl WORKDIR OUT.json

Each scope's episodes become Markdown notes (one note an episode) in their own folder, registered
as their own basic-memory project (`project add` indexes it, in this process, via basic-memory's
CLI app); every query is then searched (search_type="text", page_size=50) in its scope's project
through basic-memory's `search_notes` tool, in one event loop. Standard library + basic-memory."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path


def main() -> int:
    episodes, queries, work, out = (Path(a) for a in sys.argv[1:5])
    work.mkdir(parents=True, exist_ok=True)
    os.environ["BASIC_MEMORY_CONFIG_DIR"] = str(work / "config")
    os.environ["BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED"] = "false"
    os.environ["HOME"] = str(work / "home")
    (work / "home").mkdir(exist_ok=True)
    from importlib.metadata import version

    from basic_memory.cli.main import app
    from basic_memory.mcp.tools import search_notes

    by_scope: dict[str, list[dict]] = defaultdict(list)
    for line in episodes.open(encoding="utf-8"):
        if line.strip():
            row = json.loads(line)
            by_scope[str(row["scope"])].append(row)
    projects: dict[str, str] = {}
    ids: dict[tuple[str, str], str] = {}
    t0 = time.perf_counter()
    for n, (scope, rows) in enumerate(sorted(by_scope.items())):
        name = f"scope{n}"
        folder = work / "notes" / name
        folder.mkdir(parents=True, exist_ok=True)
        for i, row in enumerate(rows):
            (folder / f"e{i}.md").write_text(
                f"---\ntitle: e{i}\n---\n{row['text']}\n", encoding="utf-8"
            )
            ids[(name, f"e{i}")] = str(row["episode_id"])
        projects[scope] = name
    t1 = time.perf_counter()
    for name in projects.values():
        with contextlib.redirect_stdout(io.StringIO()):
            app(["project", "add", name, str(work / "notes" / name)], standalone_mode=False)
    t2 = time.perf_counter()

    qrows = [json.loads(line) for line in queries.open(encoding="utf-8") if line.strip()]
    wanted = json.loads(os.environ.get("PEERS_QUERY_IDS", "null"))
    if wanted is not None:
        keep = set(wanted)
        qrows = [q for q in qrows if q["query_id"] in keep]
    ranked: dict[str, list[str]] = {}
    lat: list[float] = []
    errors: list[str] = []

    async def run() -> None:
        from basic_memory import db

        try:
            for q in qrows:
                name = projects[str(q["scope"])]
                s = time.perf_counter()
                try:
                    res = await search_notes(query=str(q["question"]), project=name,
                                             search_type="text", output_format="json",
                                             page_size=50)  # fmt: skip
                except Exception as exc:  # noqa: BLE001 - a peer failure is data
                    res, errors[len(errors) :] = None, [f"{q['query_id']}: {exc!r}"[:300]]
                lat.append(time.perf_counter() - s)
                out_ids: list[str] = []
                if isinstance(res, dict):
                    for hit in res.get("results", []):
                        stem = Path(str(hit.get("file_path") or "")).stem
                        eid = ids.get((name, stem))
                        if eid and eid not in out_ids:
                            out_ids.append(eid)
                elif isinstance(res, str):
                    errors.append(f"{q['query_id']}: {res[:200]}")
                ranked[q["query_id"]] = out_ids
        finally:
            await db.shutdown_db()

    asyncio.run(run())
    t3 = time.perf_counter()
    out.write_text(json.dumps({
        "version": version("basic-memory"), "python": sys.version.split()[0],
        "write_notes_s": t1 - t0, "index_s": t2 - t1, "build_s": t2 - t0,
        "search_total_s": t3 - t2, "latencies_s": lat, "ranked": ranked,
        "projects": len(projects), "errors": errors[:20], "n_errors": len(errors),
    }), encoding="utf-8")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
