#!/usr/bin/env bash
# The browser tests drive Debian's chromium (never a downloaded browser). Install it if missing.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian chromium for the browser tests ..."
  bash "$(dirname "$0")/apt_install.sh" chromium
fi
[ -x /usr/bin/chromium ] || { echo "chromium is required for the browser tests (apt-get install chromium)"; exit 1; }
