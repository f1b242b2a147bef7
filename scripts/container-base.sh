#!/usr/bin/env bash
# Builds a local stand-in for docker.io/library/node:24-bookworm-slim with Podman, for machines that
# reach Debian's and npm's package registries but no image registry (this project's CI):
#
#   bash scripts/container-base.sh            # as root; prints the image name, e.g. localhost/folio-base:<hash>
#
# The same layout as the official image: Debian minbase (debootstrap, this machine's release) made
# slim the way the Debian "slim" images are (dpkg excludes docs, man pages and translations; apt
# keeps no archive cache and no lists), with the Node 24 binary of the `node` npm package (the
# version package-lock.json pins) and this machine's npm in /usr/local. The tag is a hash of this
# script and of the Node binary, so a changed recipe builds a new base and an unchanged one is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
NODE_BIN=$REPO/node_modules/node/bin/node
MIRROR=${FOLIO_BASE_MIRROR:-http://deb.debian.org/debian}
SUITE=${FOLIO_BASE_SUITE:-$(. /etc/os-release && echo "$VERSION_CODENAME")}
[ -x "$NODE_BIN" ] || { echo "container-base: $NODE_BIN is missing: run npm ci first" >&2; exit 1; }
hash=$( (cat "$0"; echo "$SUITE"; "$NODE_BIN" --version; npm --version) | sha256sum | cut -c1-12)
IMAGE=${FOLIO_BASE_IMAGE:-localhost/folio-base:$hash}
if podman image exists "$IMAGE"; then
  echo "$IMAGE"
  exit 0
fi

dir=$(mktemp -d /tmp/folio-base.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# debootstrap's downloaded packages are kept between runs (a cache of Debian's signed .debs).
cache=${FOLIO_BASE_CACHE:-/var/cache/folio-base/$SUITE}
mkdir -p "$cache"
debootstrap --variant=minbase --cache-dir="$cache" "$SUITE" "$dir/root" "$MIRROR" >"$dir/debootstrap.log" 2>&1 ||
  { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
root=$dir/root

# Debian's slim images: these files are never installed (and the installed ones are removed).
cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
# …and apt keeps no downloaded packages, no package lists and no binary caches in any layer.
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
echo 'Acquire::GzipIndexes "true";' >"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
echo 'APT::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/var/log/apt/* "$root"/tmp/*
# debootstrap's sources.list names the mirror it used; the image gets Debian's own.
echo "deb http://deb.debian.org/debian $SUITE main" >"$root/etc/apt/sources.list"

# Node and npm where the official images have them.
install -m 755 "$NODE_BIN" "$root/usr/local/bin/node"
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

tar -C "$root" --numeric-owner -c . |
  podman import -q --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]' - "$IMAGE" >/dev/null
echo "$IMAGE"
