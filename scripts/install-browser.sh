#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when it is missing (needs root + apt),
# and a small CJK font so the Chinese pages (and docs/web-zh.png) render their characters.
set -u
need_font=0
if command -v fc-list >/dev/null && [ -z "$(fc-list :lang=zh 2>/dev/null | head -1)" ]; then need_font=1; fi
if [ -x /usr/bin/chromium ] && [ "$need_font" = 0 ]; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  [ -x /usr/bin/chromium ] && exit 0
  echo "install-browser: /usr/bin/chromium missing and cannot apt-get install it" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
[ -x /usr/bin/chromium ] || apt-get install -y -qq chromium >/dev/null 2>&1
[ "$need_font" = 0 ] || apt-get install -y -qq fonts-wqy-microhei >/dev/null 2>&1 || echo "install-browser: no CJK font" >&2
[ -x /usr/bin/chromium ]
