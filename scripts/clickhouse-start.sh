#!/bin/sh
# Installs (if missing) and starts a local ClickHouse server for tests, benchmarks and CI, then waits
# until its HTTP interface answers on 127.0.0.1:8123. Safe to run again: does nothing when it answers.
# Runs without systemd (containers, CI): the Debian package's binary is started as the `clickhouse`
# user with start-stop-daemon, which is what the package's init script does.
#   scripts/clickhouse-start.sh            # then: FOLIO_TEST_CLICKHOUSE_URL=http://127.0.0.1:8123
# Environment: CLICKHOUSE_PORT (default 8123), CLICKHOUSE_WAIT_SECONDS (default 60).
set -eu

PORT="${CLICKHOUSE_PORT:-8123}"
WAIT="${CLICKHOUSE_WAIT_SECONDS:-60}"
URL="http://127.0.0.1:${PORT}/"
CONFIG=/etc/clickhouse-server/config.xml
LOG=/var/log/clickhouse-server/clickhouse-server.err.log

answers() {
  # `SELECT 1` through the HTTP interface: the same path the service uses.
  if command -v curl >/dev/null 2>&1; then
    [ "$(curl -fsS --max-time 2 "${URL}?query=SELECT%201" 2>/dev/null)" = "1" ]
  else
    [ "$(wget -qO- -T 2 "${URL}?query=SELECT%201" 2>/dev/null)" = "1" ]
  fi
}

if answers; then
  echo "clickhouse: already answering on ${URL}"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "clickhouse: not answering on ${URL}, and starting it needs root (or sudo)." >&2
    exit 1
  fi
fi

if [ ! -x /usr/sbin/clickhouse-server ]; then
  echo "clickhouse: installing clickhouse-server and clickhouse-client (apt-get)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clickhouse-server clickhouse-client >/dev/null
fi

# The package listens on 127.0.0.1 and ::1; without IPv6 in the container the server refuses to
# start on ::1, so keep only 127.0.0.1 in that case (an override file, the package file is untouched).
if [ ! -e /proc/net/if_inet6 ] && [ -d /etc/clickhouse-server ]; then
  $SUDO mkdir -p /etc/clickhouse-server/conf.d
  printf '<yandex>\n  <listen_host>127.0.0.1</listen_host>\n</yandex>\n' | $SUDO tee /etc/clickhouse-server/conf.d/folio-listen.xml >/dev/null
fi

for d in /var/lib/clickhouse /var/log/clickhouse-server; do
  $SUDO mkdir -p "$d"
  $SUDO chown -R clickhouse:clickhouse "$d"
done

echo "clickhouse: starting /usr/sbin/clickhouse-server"
$SUDO start-stop-daemon --start --quiet --background --chuid clickhouse:clickhouse \
  --chdir /var/lib/clickhouse --exec /usr/sbin/clickhouse-server -- --config-file="$CONFIG" || true

i=0
while ! answers; do
  i=$((i + 1))
  if [ "$i" -gt $((WAIT * 2)) ]; then
    echo "clickhouse: no answer on ${URL} after ${WAIT} s; last lines of ${LOG}:" >&2
    $SUDO tail -n 30 "$LOG" >&2 || true
    exit 1
  fi
  sleep 0.5
done
echo "clickhouse: answering on ${URL} ($(curl -fsS "${URL}?query=SELECT%20version()" 2>/dev/null || echo '?'))"
