#!/usr/bin/env bash
# Debian packages for `npm run test:real` (test/real): a real sshd, notify-send, a private D-Bus
# session bus (dbus-daemon, gdbus, dbus-send), python-dbusmock for the system /usr/bin/python3 and a
# PostgreSQL server (initdb, pg_ctl, psql) for throwaway clusters (test/real/pgCluster.ts), and
# chromium, driven headless by playwright-core for the timeline page (test/real/timeline.real.test.ts),
# and Prometheus with promtool (test/real/metrics.real.test.ts: a real scrape of `ocpool metrics`; promtool.real.test.ts).
# Installs nothing when everything is already there. Needs root (or sudo) only when it installs.
set -euo pipefail

PACKAGES=(openssh-server openssh-client libnotify-bin python3-dbusmock dbus libglib2.0-bin postgresql chromium prometheus)

present() {
  [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null && command -v ssh-keygen >/dev/null &&
    command -v notify-send >/dev/null && command -v dbus-daemon >/dev/null &&
    command -v gdbus >/dev/null && command -v dbus-send >/dev/null &&
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import dbusmock, dbus' 2>/dev/null &&
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null &&
    [ -x /usr/bin/chromium ] && [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]
}

if present; then
  echo "ci-real-deps: all present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${PACKAGES[@]}"

if ! present; then
  echo "ci-real-deps: still missing something after apt-get install" >&2
  exit 1
fi
echo "ci-real-deps: installed ${PACKAGES[*]}"
