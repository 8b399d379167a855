#!/usr/bin/env bash
# Installs what is missing on a Debian machine (Debian packages, then npm packages pinned by
# package-lock.json). Idempotent: does nothing when everything is there. Tools are checked as
# commands (node/npm may come from elsewhere than Debian), libraries as Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
want_cmd() {  # want_cmd COMMAND DEBIAN_PACKAGE
  command -v "$1" >/dev/null 2>&1 || need+=("$2")
}
want_pkg() {  # want_pkg DEBIAN_PACKAGE
  dpkg -s "$1" >/dev/null 2>&1 || need+=("$1")
}
want_cmd cmake cmake
want_cmd g++ g++
want_cmd clang++ clang  # the native trees (scripts/build.sh, the sanitizer tree)
want_cmd make make
want_cmd emcc emscripten
want_cmd node nodejs
want_cmd npm npm
want_pkg libgtest-dev
want_pkg libbenchmark-dev
want_pkg nlohmann-json3-dev
for extra in ${VRAMPLAN_EXTRA_PACKAGES:-}; do
  case "$extra" in
    chromium) [ -x /usr/bin/chromium ] || need+=(chromium) ;;
    *) want_pkg "$extra" ;;
  esac
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
