#!/usr/bin/env bash
# Fetch LangBot's official LongTermMemory plugin (langbot-app/langbot-plugins,
# KnowledgeEngine/LongTermMemory) at the commit the real-host suite is pinned to, into
#   ${MEMVAULT_CACHE:-~/.cache/memvault}/LongTermMemory-<commit>/
# (the plugin's own folder: manifest.yaml at its top). The suite's "LongTermMemory round
# trip" phase loads it from there (hostsuite/ltm/fixture.py); it is never copied into this
# repository. Needs git and network access to GitHub; run it once per machine.
# Usage: bash scripts/fetch_longtermmemory.sh [--force]
set -euo pipefail
# Keep in step with hostsuite/ltm/fixture.py LTM_COMMIT.
COMMIT="de2c6d6405c8dca6f209128de1bb482384b0c2d0"
REPO_URL="https://github.com/langbot-app/langbot-plugins.git"
TARBALL_URL="https://codeload.github.com/langbot-app/langbot-plugins/tar.gz/$COMMIT"
SUBDIR="KnowledgeEngine/LongTermMemory"
CACHE="${MEMVAULT_CACHE:-$HOME/.cache/memvault}"
DEST="$CACHE/LongTermMemory-$COMMIT"

if [ -f "$DEST/manifest.yaml" ] && [ "${1:-}" != "--force" ]; then
  echo "already there: $DEST (pass --force to fetch again)"
  exit 0
fi
mkdir -p "$CACHE"
WORK="$(mktemp -d "$CACHE/.ltm-fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

fetched=""
# 1. A sparse, blobless clone: only the plugin's folder at the pinned commit is downloaded.
if git -c advice.detachedHead=false clone --quiet --filter=blob:none --no-checkout --sparse \
    "$REPO_URL" "$WORK/repo" 2>"$WORK/git.log" \
  && git -C "$WORK/repo" sparse-checkout set "$SUBDIR" 2>>"$WORK/git.log" \
  && git -C "$WORK/repo" -c advice.detachedHead=false checkout --quiet "$COMMIT" 2>>"$WORK/git.log" \
  && [ -f "$WORK/repo/$SUBDIR/manifest.yaml" ]; then
  mv "$WORK/repo/$SUBDIR" "$WORK/plugin"
  fetched="sparse git clone"
else
  echo "sparse clone failed ($(tail -1 "$WORK/git.log" 2>/dev/null)); trying the tarball" >&2
  # 2. The commit's tarball, only the plugin's folder extracted.
  mkdir -p "$WORK/tar"
  if curl -fsSL "$TARBALL_URL" \
      | tar -xz -C "$WORK/tar" --wildcards "*/$SUBDIR/*" 2>"$WORK/tar.log"; then
    top="$(find "$WORK/tar" -mindepth 1 -maxdepth 1 -type d | head -1)"
    if [ -n "$top" ] && [ -f "$top/$SUBDIR/manifest.yaml" ]; then
      mv "$top/$SUBDIR" "$WORK/plugin"
      fetched="tarball"
    fi
  fi
fi
if [ -z "$fetched" ]; then
  echo "could not fetch $SUBDIR at $COMMIT from GitHub (no network, or the commit is gone):" >&2
  cat "$WORK/git.log" "$WORK/tar.log" 2>/dev/null | tail -5 >&2
  exit 1
fi
# Moved into place in one step, so a half-fetched copy is never taken for the plugin.
rm -rf "$DEST.old"
[ -d "$DEST" ] && mv "$DEST" "$DEST.old"
mv "$WORK/plugin" "$DEST"
rm -rf "$DEST.old"
echo "LongTermMemory $COMMIT ($fetched) -> $DEST ($(find "$DEST" -type f | wc -l) files)"
