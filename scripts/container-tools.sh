#!/usr/bin/env bash
# Installs what scripts/container-smoke.sh needs on a Debian machine and prints the path of a Docker
# Compose v2 ≥ 2.24 (for FOLIO_SMOKE_COMPOSE):
#
#   FOLIO_SMOKE_COMPOSE=$(bash scripts/container-tools.sh) bash scripts/container-smoke.sh   # as root
#
# Podman, runc and debootstrap come from the machine's apt sources. Docker Compose v2: Debian's
# `docker-compose` package when the machine's sources have ≥ 2.24 (trixie and later); otherwise the
# same package of Debian trixie (a Go binary that needs only libc ≥ 2.34), fetched with apt from
# Debian's archive into a folder of its own and unpacked there, not installed over this release.
# Debian bookworm's own docker-compose (1.29) is installed too: the smoke test reads the compose
# files with it. Progress goes to stderr; stdout is the path alone.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
CACHE=${FOLIO_CONTAINER_TOOLS_CACHE:-/var/cache/folio-container-tools}
SUITE=trixie

apt-get update -q >&2
apt-get install -y -q --no-install-recommends podman runc debootstrap docker-compose >&2

compose_version() { "$1" version --short 2>/dev/null; }
at_least_2_24() { dpkg --compare-versions "$1" ge 2.24; }

# The machine's own package, if it is v2 ≥ 2.24.
for c in /usr/libexec/docker/cli-plugins/docker-compose /usr/bin/docker-compose; do
  if [ -x "$c" ] && v=$(compose_version "$c") && at_least_2_24 "${v#v}"; then
    echo "$c"
    exit 0
  fi
done

# Debian trixie's package, unpacked under $CACHE (kept: apt checked its signature when it came).
dir=$CACHE/$SUITE
bin=$dir/root/usr/libexec/docker/cli-plugins/docker-compose
if ! { [ -x "$bin" ] && v=$(compose_version "$bin") && at_least_2_24 "${v#v}"; }; then
  mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/root"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $SUITE main" >"$dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir" -o "Dir::Cache::Archives=$dir/archives" -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -q >&2
  (cd "$dir" && apt-get "${apt_opts[@]}" download docker-compose >&2)
  dpkg-deb -x "$(ls -t "$dir"/docker-compose_*.deb | head -n1)" "$dir/root"
fi
v=$(compose_version "$bin") && at_least_2_24 "${v#v}" || { echo "container-tools: no Docker Compose >= 2.24 at $bin" >&2; exit 1; }
echo "$bin"
