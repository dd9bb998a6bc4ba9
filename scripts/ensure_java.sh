#!/usr/bin/env bash
# The Spark lane starts a standalone master and two workers from pyspark's distribution, and dbt-spark's
# session mode runs the Spark driver in dbt's process: all of them need a Java 17+ runtime.
# Install Debian's headless JRE if none is on PATH.
set -euo pipefail
java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
if command -v java >/dev/null 2>&1 && [ "$(java_major)" -ge 17 ]; then exit 0; fi
if command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian openjdk-17-jre-headless for the Spark lane ..."
  bash "$(dirname "$0")/apt_install.sh" openjdk-17-jre-headless
fi
command -v java >/dev/null 2>&1 && [ "$(java_major)" -ge 17 ] \
  || { echo "Java 17+ is required for the Spark lane (apt-get install openjdk-17-jre-headless)"; exit 1; }
