#!/usr/bin/env bash
# Builds Folio's image with Podman and smoke-tests it on a machine that can build images but not run
# containers (no registry, no container runtime): the image's root filesystem is mounted and its
# entry point run with chroot, as the image's user and with the image's environment.
#
#   bash scripts/container-smoke.sh        # as root; needs podman, debootstrap, git, curl, npm ci done
#
# 1. A local base image (folio-base:local) when missing: Debian minbase from debootstrap (this
#    machine's release) with the Node 24 binary of the `node` npm package and this machine's npm,
#    laid out as in the official node images (/usr/local/bin).
# 2. `podman build --isolation chroot --format docker (HEALTHCHECK is a Docker-format field) --build-arg BASE_IMAGE=folio-base:local -t folio:local`; the
#    host's CA bundle is a build secret (for a TLS-intercepting proxy), never a layer.
# 3. The image's settings, then in a chroot of its files: folio migrate, project and key, folio serve
#    answering /healthz, /readyz and the dashboard, an agent job against a local code host and a fake
#    model (scripts/container-smoke-fakes.ts, on the host) that pushes a branch and opens a pull
#    request, analytics events and exact visitors, a graceful SIGTERM.
# Prints PASS/FAIL lines and the image size; exits 1 if any check failed.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
IMAGE=${FOLIO_SMOKE_IMAGE:-localhost/folio:local}
BASE=${FOLIO_SMOKE_BASE:-localhost/folio-base:local}
MIRROR=${FOLIO_SMOKE_MIRROR:-http://deb.debian.org/debian}
PORT=${FOLIO_SMOKE_PORT:-18080}
TOKEN=smoke-token-0123456789
NODE=$REPO/node_modules/.bin/node # Node 24 on the host, for the fakes
WORK=$(mktemp -d /tmp/folio-smoke.XXXXXX)
failures=0
pids=()
container=''
scale_cleanup=''
rootfs=''

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
check() { # check "what" command…: PASS or FAIL by the command's exit code
  local what=$1
  shift
  if "$@" >>"$WORK/checks.log" 2>&1; then pass "$what"; else fail "$what"; fi
}
json() { "$NODE" -e "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log($1)"; }

cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  if [ -n "$rootfs" ]; then
    umount "$rootfs/proc" 2>/dev/null
    umount "$rootfs/dev" 2>/dev/null
  fi
  if [ -n "$container" ]; then
    podman umount "$container" >/dev/null 2>&1
    podman rm -f "$container" >/dev/null 2>&1
  fi
  [ -n "$scale_cleanup" ] && eval "$scale_cleanup"
  rm -rf "$WORK"
}
trap cleanup EXIT

build_base() {
  if podman image exists "$BASE"; then
    pass "base image $BASE present"
    return
  fi
  local dir=$WORK/base suite npm_dir
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  if ! debootstrap --variant=minbase "$suite" "$dir" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
    fail "debootstrap $suite (see $WORK/debootstrap.log)"
    tail -5 "$WORK/debootstrap.log"
    exit 1
  fi
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  install -m 755 "$REPO/node_modules/node/bin/node" "$dir/usr/local/bin/node"
  mkdir -p "$dir/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$dir/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir/usr/local/bin/npx"
  rm -rf "$dir"/var/cache/apt/archives/*.deb
  tar -C "$dir" -c . | podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]' - "$BASE" >/dev/null 2>"$WORK/import.log"
  rm -rf "$dir"
  check "base image $BASE built (Debian $suite minbase, node $("$REPO/node_modules/node/bin/node" --version))" podman image exists "$BASE"
}

build_image() {
  local secret=() ca=${NODE_EXTRA_CA_CERTS:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}} start
  [ -n "$ca" ] && [ -f "$ca" ] && secret=(--secret "id=npm_ca,src=$ca")
  start=$(date +%s)
  if podman build --isolation chroot --format docker --build-arg "BASE_IMAGE=$BASE" "${secret[@]}" -t "$IMAGE" -f Containerfile . >"$WORK/build.log" 2>&1; then
    pass "podman build --isolation chroot --format docker -t $IMAGE ($(($(date +%s) - start)) s)"
  else
    fail "podman build (last lines below)"
    tail -20 "$WORK/build.log"
    exit 1
  fi
  echo "image size: $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB (%d bytes)", $1 / 1e6, $1}')"
}

# The image's settings, as the runtime would apply them.
read_config() {
  # Podman shows the Docker-format HEALTHCHECK beside Config, not in it: merge the two.
  podman image inspect "$IMAGE" | "$NODE" -e 'const [i] = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(JSON.stringify({ ...i.Config, Healthcheck: i.Healthcheck ?? i.Config.Healthcheck }))' >"$WORK/config.json"
  check 'image runs as the non-root user folio' test "$(json 'v.User' <"$WORK/config.json")" = folio
  check 'image env FOLIO_DATA_DIR=/data, HOST=0.0.0.0, NODE_ENV=production' json '["FOLIO_DATA_DIR=/data", "HOST=0.0.0.0", "NODE_ENV=production"].every((e) => v.Env.includes(e)) || process.exit(1)' <"$WORK/config.json"
  check 'image has /data as its one volume' json 'JSON.stringify(Object.keys(v.Volumes)) === "[\"/data\"]" || process.exit(1)' <"$WORK/config.json"
  check 'image entry point is folio, default command serve' json 'v.Entrypoint.at(-1) === "/app/bin/folio.mjs" && JSON.stringify(v.Cmd) === "[\"serve\"]" || process.exit(1)' <"$WORK/config.json"
  check 'image HEALTHCHECK asks /healthz' json 'v.Healthcheck.Test.join(" ").includes("/healthz") || process.exit(1)' <"$WORK/config.json"
  mapfile -t image_env < <(json 'v.Env.join("\n")' <"$WORK/config.json")
  mapfile -t entry < <(json 'v.Entrypoint.join("\n")' <"$WORK/config.json")
  workdir=$(json 'v.WorkingDir' <"$WORK/config.json")
}

mount_rootfs() {
  container=$(podman create "$IMAGE") || { fail 'podman create'; exit 1; }
  rootfs=$(podman mount "$container") || { fail 'podman mount'; exit 1; }
  mount -t proc proc "$rootfs/proc" && mount --bind /dev "$rootfs/dev"
  userspec=$(awk -F: '$1 == "folio" { print $3 ":" $4 }' "$rootfs/etc/passwd")
  check "image node is v24 ($(chroot "$rootfs" node --version))" chroot "$rootfs" sh -c 'node --version | grep -q "^v24\."'
  check 'image has git and CA certificates' chroot "$rootfs" sh -c 'git --version && test -s /etc/ssl/certs/ca-certificates.crt'
  check 'image has the built dashboard and client' test -f "$rootfs/app/web/dist/index.html" -a -f "$rootfs/app/dist/client/index.js"
  check 'image has production dependencies only (no vite, typescript, vitest)' sh -c "test -d '$rootfs/app/node_modules/fastify' && ! test -e '$rootfs/app/node_modules/vite' && ! test -e '$rootfs/app/node_modules/typescript' && ! test -e '$rootfs/app/node_modules/vitest'"
  echo "node_modules in the image: $(du -sh "$rootfs/app/node_modules" | cut -f1)"
}

# `folio ARGS…` in the image: its env plus SMOKE_ENV, its user, working directory and entry point.
# HOST is loopback here (this machine's rule: nothing listens beyond it); TINI_SUBREAPER lets tini
# run as a child (it is PID 1 only in a real container).
folio() {
  env -i "${image_env[@]}" TINI_SUBREAPER=1 "${SMOKE_ENV[@]}" chroot --userspec="$userspec" "$rootfs" env -C "$workdir" "${entry[@]}" "$@"
}
# The same in the background, so that $! is the process itself (env, chroot and env exec into tini).
folio_background() {
  env -i "${image_env[@]}" TINI_SUBREAPER=1 "${SMOKE_ENV[@]}" chroot --userspec="$userspec" "$rootfs" env -C "$workdir" "${entry[@]}" "$@" &
}

start_fakes() {
  "$NODE" scripts/container-smoke-fakes.ts "$TOKEN" >"$WORK/fakes.out" 2>"$WORK/fakes.err" &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$WORK/fakes.out" ] && break; sleep 0.1; done
  origin=$(json 'v.origin' <"$WORK/fakes.out") && repository=$(json 'v.repositoryUrl' <"$WORK/fakes.out") && llm=$(json 'v.llm' <"$WORK/fakes.out") ||
    { fail "fakes did not start: $(cat "$WORK/fakes.err")"; exit 1; }
  SMOKE_ENV=(HOST=127.0.0.1 "PORT=$PORT" LOG_LEVEL=warn FOLIO_POLL=200
    FOLIO_MODEL=openai-compatible/smoke-model "OPENAI_COMPATIBLE_BASE_URL=$llm"
    "GITHUB_TOKEN=$TOKEN" "GITHUB_API_URL=$origin/api/v3" FOLIO_GIT_PROTOCOLS=https,http FOLIO_OUTBOUND_ALLOW=127.0.0.0/8)
}

api() { # api METHOD PATH [JSON]: prints the body; the status goes to $WORK/status
  local args=(-sS -o "$WORK/body" -w '%{http_code}' -X "$1" -H "authorization: Bearer $key")
  [ $# -gt 2 ] && args+=(-H 'content-type: application/json' --data "$3")
  curl "${args[@]}" "http://127.0.0.1:$PORT$2" >"$WORK/status"
  cat "$WORK/body"
}

run_checks() {
  check 'folio --help in the image' folio --help
  check '`folio` on PATH in the image (for docker exec)' chroot --userspec="$userspec" "$rootfs" env -i PATH=/usr/local/bin:/usr/bin:/bin folio --help
  check 'folio migrate (SQLite and DuckDB in /data)' folio migrate --json
  check 'the data written by the non-root user (uid 10001)' test "$(stat -c %u "$rootfs/data/folio.db")" = 10001
  project=$(folio project create --name Smoke --repository "$repository" --code-host github --json | json 'v.id')
  key=$(folio key create --project "$project" --json | json 'v.key')
  check "folio project create, key create ($project)" test -n "$key"

  folio_background serve >"$WORK/serve.log" 2>&1
  serve=$!
  pids+=("$serve")
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
  check 'folio serve answers /readyz' curl -sf "http://127.0.0.1:$PORT/readyz"
  check 'folio serve answers /healthz (the HEALTHCHECK)' curl -sf "http://127.0.0.1:$PORT/healthz"
  check 'folio serve runs as uid 10001' sh -c "ps -eo uid=,args= | grep -q '^ *10001 .*node /app/bin/folio.mjs serve'"
  check 'the dashboard is served from web/dist' sh -c "curl -sf http://127.0.0.1:$PORT/ | grep -qi '<script type=\"module\"'"

  job=$(api POST "/v2/agent/$project/job" '{"prompt":"Document the --dry-run flag"}' | json 'v.id')
  local status=active
  for _ in $(seq 1 150); do
    status=$(api GET "/v2/agent/$project/job/$job" | json 'v.status')
    [ "$status" != active ] && break
    sleep 0.2
  done
  check "agent job $job completed (fake model, local code host)" test "$status" = completed
  local pr
  pr=$(json 'v.prLink' <"$WORK/body")
  check "the job opened a pull request ($pr)" test "$pr" = "$origin/acme/docs/pull/1"
  check "the job pushed branch folio/$job" sh -c "git ls-remote '${repository/http:\/\//http://x-access-token:$TOKEN@}' | grep -q 'refs/heads/folio/$job\$'"

  local ua='Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
  api POST "/v1/analytics/$project/events" "{\"events\":[
    {\"path\":\"/docs\",\"userAgent\":\"$ua\",\"ip\":\"203.0.113.7\"},
    {\"path\":\"/docs\",\"userAgent\":\"$ua\",\"ip\":\"203.0.113.8\"},
    {\"path\":\"/docs\",\"userAgent\":\"$ua\",\"ip\":\"203.0.113.7\"},
    {\"path\":\"/docs\",\"userAgent\":\"claude-code/2.0.14\",\"ip\":\"198.51.100.4\"}]}" >/dev/null
  check 'analytics: 4 events accepted (202)' sh -c "test \"\$(cat '$WORK/status')\" = 202 && grep -q '\"accepted\":4' '$WORK/body'"
  local from to
  from=$(date -u -d yesterday +%F) to=$(date -u -d tomorrow +%F)
  api GET "/v1/analytics/$project/visitors?dateFrom=$from&dateTo=$to" >"$WORK/visitors.json"
  check "analytics: exact visitors {human 2, ai 1, total 3}: $(json 'JSON.stringify(v.totals)' <"$WORK/visitors.json")" \
    json 'v.totals.human === 2 && v.totals.ai === 1 && v.totals.total === 3 || process.exit(1)' <"$WORK/visitors.json"

  kill -TERM "$serve"
  local code=''
  for _ in $(seq 1 75); do kill -0 "$serve" 2>/dev/null || break; sleep 0.2; done
  wait "$serve"
  code=$?
  check "SIGTERM stops folio serve gracefully (exit $code)" test "$code" = 0
}

# The scale-out commands of the image, when this machine has PostgreSQL and ClickHouse (the test
# servers of the scale leg): folio migrate, serve --no-workers and worker on one fresh database each.
run_scale_checks() {
  local pg_admin=${FOLIO_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres} ch=${FOLIO_TEST_CLICKHOUSE_URL:-http://127.0.0.1:8123}
  if ! psql "$pg_admin" -qAtc 'select 1' >/dev/null 2>&1 || ! curl -sf "$ch/ping" >/dev/null; then
    echo "SKIP scale-out commands (no PostgreSQL at $pg_admin or ClickHouse at $ch)"
    return
  fi
  local db
  db=folio_smoke_$(date +%s)
  psql "$pg_admin" -qc "create database $db" || { fail "create database $db"; return; }
  scale_cleanup="psql '$pg_admin' -qc 'drop database if exists $db with (force)'; curl -s '$ch' --data-binary 'DROP DATABASE IF EXISTS $db' >/dev/null"
  local saved=("${SMOKE_ENV[@]}") port=$((PORT + 1))
  SMOKE_ENV+=("DATABASE_URL=${pg_admin%/*}/$db" "CLICKHOUSE_URL=$ch/$db" "FOLIO_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" "PORT=$port")
  migrate_scale() { folio migrate | tee -a "$WORK/checks.log" | grep -q 'Analytics (clickhouse), applied'; }
  check 'scale: folio migrate (PostgreSQL and ClickHouse)' migrate_scale
  project=$(folio project create --name Scale --repository "$repository" --code-host github --json | json 'v.id')
  key=$(folio key create --project "$project" --json | json 'v.key')
  folio_background serve --no-workers >"$WORK/serve-api.log" 2>&1
  pids+=($!)
  folio_background worker >"$WORK/worker.log" 2>&1
  pids+=($!)
  local status=active
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
  check 'scale: folio serve --no-workers answers /readyz' curl -sf "http://127.0.0.1:$port/readyz"
  PORT=$port
  job=$(api POST "/v2/agent/$project/job" '{"prompt":"Check the docs"}' | json 'v.id')
  for _ in $(seq 1 150); do
    status=$(api GET "/v2/agent/$project/job/$job" | json 'v.status')
    [ "$status" != active ] && break
    sleep 0.2
  done
  check "scale: job $job completed by folio worker (the API runs no workers)" test "$status" = completed
  local ua='Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
  api POST "/v1/analytics/$project/events" "{\"events\":[{\"path\":\"/a\",\"userAgent\":\"$ua\",\"ip\":\"203.0.113.7\"},{\"path\":\"/a\",\"userAgent\":\"$ua\",\"ip\":\"203.0.113.7\"},{\"path\":\"/b\",\"userAgent\":\"$ua\",\"ip\":\"203.0.113.9\"}]}" >/dev/null
  api GET "/v1/analytics/$project/visitors?dateFrom=$(date -u -d yesterday +%F)&dateTo=$(date -u -d tomorrow +%F)" >"$WORK/visitors.json"
  check "scale: exact visitors from ClickHouse {human 2, ai 0, total 2}: $(json 'JSON.stringify(v.totals)' <"$WORK/visitors.json")" \
    json 'v.totals.human === 2 && v.totals.ai === 0 && v.totals.total === 2 || process.exit(1)' <"$WORK/visitors.json"
  SMOKE_ENV=("${saved[@]}")
}

build_base
build_image
read_config
mount_rootfs
start_fakes
run_checks
run_scale_checks
if [ "$failures" -gt 0 ]; then
  echo "--- serve log"; tail -30 "$WORK/serve.log" 2>/dev/null
  echo "--- checks log"; tail -30 "$WORK/checks.log"
  echo "$failures check(s) failed"
  exit 1
fi
echo 'all checks passed'
