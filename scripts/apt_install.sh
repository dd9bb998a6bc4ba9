#!/usr/bin/env bash
# `apt_install.sh PACKAGE`: install one Debian package, once at a time. `make test` sets up chromium,
# Java and the Python environments side by side (make -j): the apt-get calls of this machine queue on one
# lock instead of failing on dpkg's or apt's lists lock.
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/gpu-ledger-apt.lock"
  flock 9
fi
APT=(apt-get -o DPkg::Lock::Timeout=600)
$SUDO "${APT[@]}" install -y -qq "$1" >/dev/null 2>&1 || { $SUDO "${APT[@]}" update -qq && $SUDO "${APT[@]}" install -y -qq "$1"; }
