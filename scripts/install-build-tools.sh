#!/usr/bin/env bash
# Installs the tools of the site-build check into a tool cache, once, at pinned versions: the
# Mintlify CLI (npm `mint`, about 1 GB; `mint broken-links` then runs with no network). Builds
# mount the cache read-only; nothing is installed per job. Lifecycle scripts are not run.
#   scripts/install-build-tools.sh [DIR]   (DIR: $FOLIO_BUILD_TOOLS_DIR, else /opt/folio/build-tools)
set -euo pipefail
MINT_VERSION=4.2.941

dir="${1:-${FOLIO_BUILD_TOOLS_DIR:-/opt/folio/build-tools}}"
mkdir -p "$dir"
if [ "$(cat "$dir/mint/.version" 2>/dev/null || true)" != "$MINT_VERSION" ]; then
  staging="$(mktemp -d "$dir/.mint-XXXXXX")"
  echo '{"private":true}' > "$staging/package.json"
  npm install --prefix "$staging" --no-audit --no-fund --ignore-scripts --omit=dev --loglevel=error "mint@$MINT_VERSION"
  echo "$MINT_VERSION" > "$staging/.version"
  rm -rf "$dir/mint"
  mv "$staging" "$dir/mint"
fi
# Builds run as another user (FOLIO_BUILD_UID) and read the cache.
chmod -R a+rX "$dir"
echo "build tools in $dir: mint $(cat "$dir/mint/.version")"
