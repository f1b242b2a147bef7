#!/bin/sh
# Removes from a production node_modules what the server never loads (the Containerfile runs it on
# the image's dependencies; scripts/container-smoke.sh checks the image still serves, runs a job,
# records analytics and answers /docs):
#   - source maps, and TypeScript files: declarations (so type-only packages keep only package.json
#     and licence) and sources some packages ship beside their JavaScript. Node never strips types
#     under node_modules, so no .ts file there can be loaded;
#   - Markdown and MDX (READMEs, changelogs, docs folders) — licence files are kept whatever their
#     extension;
#   - test, example and benchmark folders.
#
#   sh scripts/prune-node-modules.sh node_modules
set -eu
dir=${1:?usage: prune-node-modules.sh <node_modules>}
[ -d "$dir" ] || { echo "prune-node-modules: $dir is not a folder" >&2; exit 1; }
before=$(du -sk "$dir" | cut -f1)
find "$dir" -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name example -o -name examples \
  -o -name benchmark -o -name benchmarks -o -name .github \) -exec rm -rf {} +
find "$dir" -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.tsx' \
  -o -name '*.md' -o -name '*.mdx' -o -name '*.markdown' \) \
  -not -iname 'licen[cs]e*' -not -iname 'copying*' -not -iname 'notice*' -delete
find "$dir" -depth -type d -empty -delete
echo "prune-node-modules: $dir from $((before / 1024)) MB to $(($(du -sk "$dir" | cut -f1) / 1024)) MB"
