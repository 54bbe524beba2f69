#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when it is missing (needs root + apt).
set -u
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-browser: /usr/bin/chromium missing and cannot apt-get install it" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq chromium >/dev/null 2>&1
[ -x /usr/bin/chromium ]
