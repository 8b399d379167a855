#!/usr/bin/env bash
# Installs what is missing on a Debian machine (Debian packages, then npm packages pinned by
# package-lock.json). Idempotent: does nothing when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in cmake g++ make libgtest-dev libbenchmark-dev nlohmann-json3-dev emscripten nodejs npm ${VRAMPLAN_EXTRA_PACKAGES:-}; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# npm packages (playwright-core for the browser tests), exactly as locked.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
