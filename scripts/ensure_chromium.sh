#!/usr/bin/env bash
# Makes sure Debian's chromium (/usr/bin/chromium), a small CJK font, a Thai font and a colour
# emoji font are installed (apt-get, with sudo when not root): the Memory Console's browser
# tests drive that chromium through pip's playwright (`npx playwright install` is not used),
# and their screenshots need the fonts for Chinese / Japanese, Thai and emoji (boxes without
# them). Idempotent and quiet: does nothing when all of them are there.
set -euo pipefail
packages=()
[ -x /usr/bin/chromium ] || packages+=(chromium)
for font in fonts-wqy-microhei fonts-tlwg-loma fonts-noto-color-emoji; do
  dpkg -s "$font" >/dev/null 2>&1 || packages+=("$font")
done
[ "${#packages[@]}" -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure_chromium: missing ${packages[*]} and apt-get is not available;" \
    "install Chromium so that /usr/bin/chromium exists" >&2
  exit 1
fi
run=()
[ "$(id -u)" -eq 0 ] || run=(sudo)
export DEBIAN_FRONTEND=noninteractive
install() {
  "${run[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null 2>&1
}
if ! install; then
  "${run[@]}" apt-get update -qq >/dev/null 2>&1
  install || { echo "ensure_chromium: apt-get install ${packages[*]} failed" >&2; exit 1; }
fi
if [ ! -x /usr/bin/chromium ]; then
  echo "ensure_chromium: apt-get finished but /usr/bin/chromium is still missing" >&2
  exit 1
fi
