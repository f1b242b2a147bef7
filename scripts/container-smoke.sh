#!/usr/bin/env bash
# Folio's image, proven as real containers (the container leg of .ci/run):
#
#   bash scripts/container-smoke.sh     # as root; podman, runc, debootstrap, npm ci done, and Docker
#                                        # Compose v2 ≥ 2.24 at $FOLIO_SMOKE_COMPOSE (or docker-compose on PATH)
#   FOLIO_SMOKE_BUILD_TOOLS="mkdocs mint" bash scripts/container-smoke.sh   # the image with the build
#                                        # check's tools (the Containerfile's FOLIO_BUILD_TOOLS; no size limit)
#
# 1. The base: scripts/container-base.sh (a local node:24-bookworm-slim; no image registry is needed).
# 2. `podman --runtime runc build --format docker` (HEALTHCHECK is a Docker-format field) of the
#    Containerfile; the image must stay ≤ 400 MB on that base. What is inside is measured and printed.
# 3. The image's settings, and its files seen from a container (user, Node 24, git, bubblewrap and the
#    build tools asked for, no dev packages); bubblewrap cannot mount /proc without the option below.
# 4. `podman --runtime runc run` with explicit limits (crun's and Podman's default rlimits are refused
#    here): the outside world (a code host and a model, scripts/container-smoke-fakes.ts) in a
#    container of its own on a private network; Folio in another, its port published on loopback,
#    with the build sandbox's documented option (`--security-opt unmask=/proc/*`): healthy,
#    `exec folio …`, a job that opens a pull request (its site build skipped with the sentence saying
#    how to add the Mintlify CLI, or run when the image has it), a job whose project's buildCommand
#    probes the sandbox (contained: no /data, no Folio settings or process, no 127.0.0.1), exact
#    visitors, recreated on its volume with its data, stopped gracefully in under 1.5 s; a `worker`
#    container healthy too; and with PostgreSQL and ClickHouse on this machine, migrate,
#    serve --no-workers and worker on them.
# 5. deploy/compose.single.yaml through Docker Compose v2 talking to `podman system service`'s Docker
#    API, with FOLIO_SANDBOX_SECURITY_OPT=unmask=/proc/* in its .env: up, healthy, exec, a job (its
#    build contained) and visitors, recreated with its data, stop in under 1.5 s, down -v.
#    deploy/compose.yaml: Compose itself refuses it without FOLIO_SECRET.
# Podman runs health checks from systemd timers, which this machine has not: the script runs them
# (`podman healthcheck run`) as a runtime would. Prints PASS/FAIL lines; exits 1 if any check failed.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
IMAGE=${FOLIO_SMOKE_IMAGE:-localhost/folio:local}
PORT=${FOLIO_SMOKE_PORT:-18080}
SUBNET=${FOLIO_SMOKE_SUBNET:-10.89.177.0/24}
FAKES_IP=${SUBNET%.0/24}.2
NET=folio-smoke
TOKEN=smoke-token-0123456789
NODE=$REPO/node_modules/.bin/node # Node 24 on the host, for reading JSON
WORK=$(mktemp -d /tmp/folio-smoke.XXXXXX)
PODMAN=(podman --runtime runc)
# What a container needs here: runc, limits this machine grants, no registry, no systemd timers.
RUN=("${PODMAN[@]}" run --pull=never --ulimit nofile=20000:20000 --ulimit nproc=8192:8192 --health-interval disable)
# What a container that runs jobs must allow for the build sandbox, as docs/deployment.md says for
# Podman: bubblewrap mounts a fresh /proc, which masked /proc paths forbid. (Podman takes Docker's
# `systempaths=unconfined` on its command line too, but not from Compose v2 through its Docker API.)
SANDBOX_OPT='unmask=/proc/*'
SANDBOX=(--security-opt "$SANDBOX_OPT")
BUILD_TOOLS=${FOLIO_SMOKE_BUILD_TOOLS:-} # the image's FOLIO_BUILD_TOOLS: empty is the default image
has_tool() { [[ " $BUILD_TOOLS " == *" $1 "* ]]; }
# A project's build command that fails, saying why, if its sandbox lets it see Folio: the data
# directory, Folio's settings in its environment, Folio's process, or Folio's port on 127.0.0.1.
CONTAINED=$(cat <<'EOF'
f() { echo "not contained: $1"; exit 1; }; test ! -e /data || f 'it sees /data'; ! env | grep -Eq '^(FOLIO_|GITHUB_|OPENAI_)' || f "Folio's settings are in its environment"; ! grep -qs 'folio[.]mjs' /proc/[0-9]*/cmdline || f "it sees Folio's process"; node -e "require('net').connect(8080, '127.0.0.1').on('connect', () => process.exit(1)).on('error', () => process.exit(0))" || f 'it reached 127.0.0.1:8080'; echo contained
EOF
)
# The same probes from Folio's own process in that container: each must see what the build did not.
UNCONTAINED=$(cat <<'EOF'
test -e /data/folio.db && env | grep -Eq '^(FOLIO_|GITHUB_)' && grep -qs 'folio[.]mjs' /proc/[0-9]*/cmdline && node -e "require('net').connect(8080, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))"
EOF
)
# With mkdocs in the image: a build command that makes a one-page MkDocs site and builds it --strict.
MKDOCS_SITE='cd "$TMPDIR" && mkdir -p site/docs && echo "# Home" >site/docs/index.md && echo "site_name: Smoke" >site/mkdocs.yml && mkdocs build --strict --config-file site/mkdocs.yml --site-dir out'
CONTAINERS=(folio-smoke folio-smoke-worker folio-smoke-api folio-smoke-scale-worker folio-smoke-fakes)
VOLUMES=(folio-smoke-data folio-smoke-worker-data)
COMPOSE_PROJECT=folio-smoke-compose
passes=0
failures=0
skips=0
service_pid=''
scale_cleanup=''

pass() { echo "PASS $*"; passes=$((passes + 1)); }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
skip() { echo "SKIP $*"; skips=$((skips + 1)); }
check() { # check "what" command…: PASS or FAIL by the command's exit code
  local what=$1
  shift
  if "$@" >>"$WORK/checks.log" 2>&1; then pass "$what"; else fail "$what"; fi
}
json() { "$NODE" -e "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log($1)"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

compose_bin() {
  local c=${FOLIO_SMOKE_COMPOSE:-$(command -v docker-compose)}
  [ -n "$c" ] && "$c" version --short 2>/dev/null | grep -Eq '^v?2\.(2[4-9]|[3-9][0-9])' && echo "$c"
}
compose() { DOCKER_HOST=unix://$WORK/podman.sock "$COMPOSE" -p "$COMPOSE_PROJECT" --project-directory "$WORK/compose" -f "$WORK/compose/compose.single.yaml" -f "$WORK/compose/smoke.yaml" "$@"; }

remove_all() {
  local c
  for c in "${CONTAINERS[@]}"; do podman rm -f -v "$c" >/dev/null 2>&1; done
  [ -f "$WORK/compose/compose.single.yaml" ] && [ -S "$WORK/podman.sock" ] && compose down -v >/dev/null 2>&1
  podman ps -a --filter "label=com.docker.compose.project=$COMPOSE_PROJECT" -q | xargs -r podman rm -f -v >/dev/null 2>&1
  podman volume rm -f "${VOLUMES[@]}" "${COMPOSE_PROJECT}_folio-data" >/dev/null 2>&1
  podman network rm -f "$NET" >/dev/null 2>&1
}
cleanup() {
  remove_all
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
  [ -n "$scale_cleanup" ] && eval "$scale_cleanup"
  rm -rf "$WORK"
}
trap cleanup EXIT

prerequisites() {
  local missing=()
  for cmd in podman runc debootstrap curl; do command -v "$cmd" >/dev/null || missing+=("$cmd"); done
  [ "$(id -u)" = 0 ] || missing+=(root)
  COMPOSE=$(compose_bin) || missing+=('Docker Compose v2 >= 2.24 (FOLIO_SMOKE_COMPOSE)')
  [ ${#missing[@]} -eq 0 ] || { fail "prerequisites missing: ${missing[*]}"; exit 1; }
  echo "podman $(podman version --format '{{.Client.Version}}'), runc $(runc --version | awk 'NR == 1 { print $3 }'), Docker Compose $("$COMPOSE" version --short)"
  remove_all # what an interrupted earlier run left
}

build() {
  local start secret=() ca=${NODE_EXTRA_CA_CERTS:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
  start=$(date +%s)
  BASE=$(bash scripts/container-base.sh 2>"$WORK/base.log") || { fail "base image (see below)"; tail -20 "$WORK/base.log"; exit 1; }
  pass "base image $BASE ($(($(date +%s) - start)) s; $(podman image inspect --format '{{.Size}}' "$BASE" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
  [ -f "$ca" ] && secret=(--secret "id=npm_ca,src=$ca")
  start=$(date +%s)
  if "${PODMAN[@]}" build --format docker --build-arg "BASE_IMAGE=$BASE" --build-arg "FOLIO_BUILD_TOOLS=$BUILD_TOOLS" "${secret[@]}" -t "$IMAGE" -f Containerfile . >"$WORK/build.log" 2>&1; then
    pass "podman --runtime runc build --format docker${BUILD_TOOLS:+ --build-arg FOLIO_BUILD_TOOLS=\"$BUILD_TOOLS\"} -t $IMAGE ($(($(date +%s) - start)) s)"
  else
    fail "podman build (last lines below)"
    tail -20 "$WORK/build.log"
    exit 1
  fi
  local size base_size
  size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
  base_size=$(podman image inspect --format '{{.Size}}' "$BASE")
  if [ -z "$BUILD_TOOLS" ]; then
    check "image size $((size / 1000000)) MB ≤ 400 MB on the slim base" test "$size" -le 400000000
  else
    echo "image size $((size / 1000000)) MB with FOLIO_BUILD_TOOLS=\"$BUILD_TOOLS\" (the 400 MB goal is the default image's)"
  fi
  echo "what is inside: base $((base_size / 1000000)) MB; the apt step (git, ca-certificates, tini, bubblewrap$(for t in $BUILD_TOOLS; do [ "$t" = mint ] || printf ', %s' "$t"; done)) $(podman history --no-trunc --format '{{.Size}}|{{.CreatedBy}}' "$IMAGE" | awk -F'|' '/apt-get install/ { print $1 }')"
  "${RUN[@]}" --rm --entrypoint sh "$IMAGE" -c 'cd /app && for d in node_modules node_modules/@duckdb src web/dist dist /usr/local/bin/node /usr/local/lib/node_modules/npm /usr/lib/git-core /usr/bin/bwrap /opt/folio/build-tools; do printf "  %-36s %6.1f MB\n" "$d" "$(du -s --apparent-size -B1 "$d" | cut -f1 | awk "{ print \$1 / 1e6 }")"; done' 2>/dev/null
}

# The image's settings, as the runtime applies them.
image_settings() {
  podman image inspect "$IMAGE" | "$NODE" -e 'const [i] = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(JSON.stringify({ ...i.Config, Healthcheck: i.Healthcheck ?? i.Config.Healthcheck }))' >"$WORK/config.json"
  check 'image runs as the non-root user folio' test "$(json 'v.User' <"$WORK/config.json")" = folio
  check 'image env FOLIO_DATA_DIR=/data, HOST=0.0.0.0, PORT=8080, NODE_ENV=production' json '["FOLIO_DATA_DIR=/data", "HOST=0.0.0.0", "PORT=8080", "NODE_ENV=production"].every((e) => v.Env.includes(e)) || process.exit(1)' <"$WORK/config.json"
  check 'image has /data as its one volume' json 'JSON.stringify(Object.keys(v.Volumes)) === "[\"/data\"]" || process.exit(1)' <"$WORK/config.json"
  check 'image entry point is tini and folio, default command serve' json 'v.Entrypoint.join(" ") === "/usr/bin/tini -- node /app/bin/folio.mjs" && JSON.stringify(v.Cmd) === "[\"serve\"]" || process.exit(1)' <"$WORK/config.json"
  check 'image HEALTHCHECK is folio healthcheck (every role)' json 'v.Healthcheck.Test.join(" ") === "CMD node /app/bin/folio.mjs healthcheck" || process.exit(1)' <"$WORK/config.json"
  inside() { "${RUN[@]}" --rm --entrypoint sh "$IMAGE" -c "$1" 2>>"$WORK/podman.log"; }
  check "image node is v24 ($(inside 'node --version'))" inside 'node --version | grep -q "^v24\."'
  check 'image has git (with its HTTP transport) and CA certificates' inside 'git --version && test -x /usr/lib/git-core/git-remote-https && test -s /etc/ssl/certs/ca-certificates.crt'
  check "image has bubblewrap, the build check's sandbox ($(inside 'bwrap --version'))" inside 'bwrap --version'
  local t
  for t in $BUILD_TOOLS; do
    if [ "$t" = mint ]; then
      check "image has the Mintlify CLI in the tool cache, for the user folio (mint $(inside 'cat /opt/folio/build-tools/mint/.version'))" inside 'test -x /opt/folio/build-tools/mint/node_modules/.bin/mint'
    else
      check "image has the Debian package $t (FOLIO_BUILD_TOOLS)" inside "dpkg -s '$t' >/dev/null"
    fi
  done
  # Why containers that run jobs need the option: without it the kernel refuses bwrap a new /proc.
  masked_proc() { ! "${RUN[@]}" --rm --entrypoint bwrap "$IMAGE" --unshare-user --unshare-pid --ro-bind / / --proc /proc true >"$WORK/bwrap.txt" 2>&1 && grep -q "Can't mount proc" "$WORK/bwrap.txt"; }
  check "without ${SANDBOX[*]}, bubblewrap in a container cannot mount /proc (docs/deployment.md)" masked_proc
  check 'image has the built dashboard and client' inside 'test -f /app/web/dist/index.html && test -f /app/dist/client/index.js'
  check 'image has production dependencies only (none of the devDependencies)' inside 'cd /app/node_modules && test -d fastify && node -e "const dev = Object.keys(require(\"/app/package.json\").devDependencies); const here = dev.filter((d) => require(\"fs\").existsSync(d)); if (here.length) { console.log(here); process.exit(1); }"'
  check 'image node_modules has no source maps, TypeScript files or Markdown' inside 'test -z "$(find /app/node_modules -type f \( -name "*.map" -o -name "*.ts" -o -name "*.md" \) ! -iname "licen*" | head -1)"'
  check 'image holds no build secret and no npm cache or credentials' inside '! test -e /run/secrets/npm_ca && ! test -e /root/.npm && ! test -e /root/.npmrc && ! test -e /app/.npmrc'
}

# The outside world of the containers: a code host (git smart HTTP + the GitHub API) and a model,
# in a container of the image (it has node and git) on the smoke network at a fixed address.
start_fakes() {
  podman network create --subnet "$SUBNET" "$NET" >/dev/null || { fail "podman network create $NET ($SUBNET)"; exit 1; }
  "${RUN[@]}" -d --name folio-smoke-fakes --network "$NET" --ip "$FAKES_IP" -v "$REPO:/src:ro" --entrypoint node "$IMAGE" \
    /src/scripts/container-smoke-fakes.ts "$TOKEN" "$FAKES_IP" >/dev/null 2>>"$WORK/podman.log" || { fail 'fakes container'; exit 1; }
  for _ in $(seq 1 100); do podman logs folio-smoke-fakes 2>/dev/null | grep -q '^{' && break; sleep 0.2; done
  podman logs folio-smoke-fakes >"$WORK/fakes.out" 2>&1
  origin=$(grep '^{' "$WORK/fakes.out" | json 'v.origin') && repository=$(grep '^{' "$WORK/fakes.out" | json 'v.repositoryUrl') && llm=$(grep '^{' "$WORK/fakes.out" | json 'v.llm') ||
    { fail "fakes did not start: $(cat "$WORK/fakes.out")"; exit 1; }
  pass "code host and model in a container at $FAKES_IP ($origin)"
  FOLIO_ENV=(FOLIO_POLL=200 FOLIO_MODEL=openai-compatible/smoke-model "OPENAI_COMPATIBLE_BASE_URL=$llm"
    "GITHUB_TOKEN=$TOKEN" "GITHUB_API_URL=$origin/api/v3" FOLIO_GIT_PROTOCOLS=https,http "FOLIO_OUTBOUND_ALLOW=$SUBNET")
}

api() { # api BASE METHOD PATH [JSON]: prints the body; the status goes to $WORK/status
  local args=(-sS -o "$WORK/body" -w '%{http_code}' -X "$2" -H "authorization: Bearer $key")
  [ $# -gt 3 ] && args+=(-H 'content-type: application/json' --data "$4")
  curl "${args[@]}" "$1$3" >"$WORK/status"
  cat "$WORK/body"
}
wait_ready() { for _ in $(seq 1 150); do curl -sf "$1/readyz" >/dev/null && return 0; sleep 0.2; done; return 1; }
wait_healthy() { # wait_healthy CONTAINER: runs the image's HEALTHCHECK until it passes (at most 60 s)
  for _ in $(seq 1 30); do podman healthcheck run "$1" >/dev/null 2>&1 && return 0; sleep 2; done
  return 1
}
health_status() { podman inspect --format '{{.State.Health.Status}}' "$1"; }
job_completes() { # job_completes BASE PROMPT: creates a job, waits, sets $job and $pr
  job=$(api "$1" POST "/v2/agent/$project/job" "{\"prompt\":\"$2\"}" | json 'v.id')
  local status=active
  for _ in $(seq 1 200); do
    status=$(api "$1" GET "/v2/agent/$project/job/$job" | json 'v.status')
    [ "$status" != active ] && break
    sleep 0.2
  done
  pr=$(json 'v.prLink' <"$WORK/body")
  test "$status" = completed
}
UA='Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
visitors() { api "$1" GET "/v1/analytics/$project/visitors?dateFrom=$(date -u -d yesterday +%F)&dateTo=$(date -u -d tomorrow +%F)" | json 'JSON.stringify(v.totals)'; }
# `docker stop`: the container must exit 0 (graceful) within 1.5 s of its SIGTERM, from the moment
# Folio logs the signal to the runtime's exit time (the command's own time, which on a loaded machine
# is mostly the client's, is printed beside it).
timed_stop() { # timed_stop WHAT CONTAINER COMMAND…
  local what=$1 container=$2 start wall signalled exited
  shift 2
  start=$(now_ms)
  "$@" >>"$WORK/checks.log" 2>&1
  wall=$(($(now_ms) - start))
  signalled=$(podman logs "$container" 2>&1 | grep '"msg":"shutting down"' | tail -1 | json 'v.time')
  exited=$(date -d "$(podman inspect --format '{{.State.FinishedAt}}' "$container" | sed 's/ UTC$//')" +%s%3N)
  check "$what: exit code 0, $((exited - signalled)) ms from SIGTERM to exit (< 1500; the command took $wall ms)" \
    test "$(podman inspect --format '{{.State.ExitCode}}' "$container")" = 0 -a $((exited - signalled)) -lt 1500
}

# The site build of the last job ($job) as its changes report it, into $WORK/build.json.
build_report() {
  api "$1" GET "/v2/agent/$project/job/$job/changes" >"$WORK/changes.json"
  json 'JSON.stringify(v.checks && v.checks.build || null)' <"$WORK/changes.json" >"$WORK/build.json"
  cat "$WORK/changes.json" >>"$WORK/checks.log" # what a failed check below prints
}

# The build check in a container that runs jobs (CONTAINER, reached at BASE; EXEC runs a command in
# it): the first job's framework build (the Mintlify CLI: skipped with the sentence saying how to add
# it, or run when the image has it), then a job whose project's buildCommand probes its sandbox.
site_builds() {
  local base=$1 container=$2 exec=$3
  build_report "$base"
  if has_tool mint; then
    check "the job's site build: mint broken-links from the tool cache ran in the sandbox ($(json 'v.status + " in " + v.ms + " ms"' <"$WORK/build.json"))" json 'v.tool === "mint" && v.status === "passed" || process.exit(1)' <"$WORK/build.json"
  else
    check "the job's site build was skipped, saying how to add the tool: $(json 'v.reason' <"$WORK/build.json")" json 'v.tool === "mint" && v.status === "skipped" && v.reason.includes("FOLIO_BUILD_TOOLS") || process.exit(1)' <"$WORK/build.json"
  fi
  $exec folio project update "$project" --build-command "$CONTAINED" >>"$WORK/checks.log" 2>&1
  check "folio project update --build-command <a command that probes its sandbox>; its job completed" job_completes "$base" 'Document the --dry-run flag'
  build_report "$base"
  check "the build ran in bubblewrap in the container and was contained: no /data, no Folio settings or process, no 127.0.0.1:8080 ($(json 'v.tool + " " + v.status + " in " + v.ms + " ms"' <"$WORK/build.json"))" json 'v.tool === "custom" && v.status === "passed" || process.exit(1)' <"$WORK/build.json"
  check "…while Folio's own process in $container sees /data, its settings and process, and reaches 127.0.0.1:8080" $exec sh -c "$UNCONTAINED"
  if has_tool mkdocs; then # a two-line MkDocs site made by the build itself, built --strict
    $exec folio project update "$project" --build-command "$MKDOCS_SITE" >>"$WORK/checks.log" 2>&1
    check 'folio project update --build-command <mkdocs build --strict of a small site>; its job completed' job_completes "$base" 'Document the --dry-run flag'
    build_report "$base"
    check "mkdocs build --strict ran in the sandbox ($(json 'v.status + " in " + v.ms + " ms"' <"$WORK/build.json"))" json 'v.status === "passed" || process.exit(1)' <"$WORK/build.json"
  fi
}

run_container() {
  local base=http://127.0.0.1:$PORT env=() e
  for e in "${FOLIO_ENV[@]}"; do env+=(-e "$e"); done
  start_folio() { "${RUN[@]}" -d --name folio-smoke --network "$NET" "${SANDBOX[@]}" -p "127.0.0.1:$PORT:8080" -v folio-smoke-data:/data "${env[@]}" "$IMAGE" >/dev/null 2>>"$WORK/podman.log"; }
  check "podman run -d ${SANDBOX[*]} -p 127.0.0.1:$PORT:8080 -v folio-smoke-data:/data $IMAGE" start_folio
  check 'folio serve answers /readyz through the published port' wait_ready "$base"
  check 'the HEALTHCHECK passes (folio healthcheck: serve)' wait_healthy folio-smoke
  check "podman reports the container $(health_status folio-smoke)" test "$(health_status folio-smoke)" = healthy
  check 'folio serve runs as uid 10001, under tini as PID 1' sh -c "podman top folio-smoke user,pid,args | grep -Eq '^folio +1 +/usr/bin/tini' && podman exec folio-smoke id -u | grep -qx 10001"
  check 'the dashboard is served from web/dist' sh -c "curl -sf $base/ | grep -qi '<script type=\"module\"'"
  check 'the API reference answers at /docs and /openapi.json' sh -c "curl -sfL $base/docs | grep -qi '<html' && curl -sf $base/openapi.json | grep -q '\"openapi\"'"
  project=$(podman exec folio-smoke folio project create --name Smoke --repository "$repository" --code-host github --json 2>>"$WORK/checks.log" | json 'v.id')
  key=$(podman exec folio-smoke folio key create --project "$project" --json 2>>"$WORK/checks.log" | json 'v.key')
  check "podman exec folio-smoke folio project create, key create ($project)" test -n "$key"
  check 'the data in the volume belongs to the non-root user' sh -c "podman exec folio-smoke stat -c '%u %a' /data /data/folio.db | tr '\n' ' ' | grep -q '^10001 700 10001 600 $'"
  check "agent job completed (fake model, code host in its container)" job_completes "$base" 'Document the --dry-run flag'
  check "the job opened a pull request ($pr)" test "$pr" = "$origin/acme/docs/pull/1"
  check "the job pushed branch folio/$job" sh -c "podman exec folio-smoke git -c 'http.extraHeader=Authorization: Basic $(printf 'x-access-token:%s' "$TOKEN" | base64 -w0)' ls-remote '$repository' | grep -q 'refs/heads/folio/$job\$'"
  site_builds "$base" folio-smoke 'podman exec folio-smoke'
  api "$base" POST "/v1/analytics/$project/events" "{\"events\":[
    {\"path\":\"/docs\",\"userAgent\":\"$UA\",\"ip\":\"203.0.113.7\"},
    {\"path\":\"/docs\",\"userAgent\":\"$UA\",\"ip\":\"203.0.113.8\"},
    {\"path\":\"/docs\",\"userAgent\":\"$UA\",\"ip\":\"203.0.113.7\"},
    {\"path\":\"/docs\",\"userAgent\":\"claude-code/2.0.14\",\"ip\":\"198.51.100.4\"}]}" >/dev/null
  check 'analytics: 4 events accepted (202)' sh -c "test \"\$(cat '$WORK/status')\" = 202 && grep -q '\"accepted\":4' '$WORK/body'"
  local totals
  totals=$(visitors "$base")
  check "analytics: exact visitors $totals = {human 2, ai 1, total 3}" test "$totals" = '{"human":2,"ai":1,"total":3}'

  timed_stop 'podman stop folio-smoke (SIGTERM through tini)' folio-smoke podman stop folio-smoke
  # An upgrade: a new container on the same volume.
  podman rm folio-smoke >/dev/null 2>&1
  check 'a new container on the same volume starts' start_folio
  check 'it answers /readyz' wait_ready "$base"
  local after
  after=$(api "$base" GET "/v2/agent/$project/job/$job" | json 'v.status')
  totals=$(visitors "$base")
  check "its data kept: the key, job $job ($after), visitors $totals" test "$after/$totals" = 'completed/{"human":2,"ai":1,"total":3}'
  check 'podman exec folio-smoke folio healthcheck' sh -c 'podman exec folio-smoke folio healthcheck | grep -q "^healthy: folio serve"'

  start_worker() { "${RUN[@]}" -d --name folio-smoke-worker -v folio-smoke-worker-data:/data "$IMAGE" worker >/dev/null 2>>"$WORK/podman.log"; }
  check 'podman run … worker: a worker container starts' start_worker
  check 'the worker container is healthy (folio healthcheck: worker)' wait_healthy folio-smoke-worker
  check "podman reports the worker $(health_status folio-smoke-worker)" test "$(health_status folio-smoke-worker)" = healthy
  timed_stop 'podman stop folio-smoke-worker' folio-smoke-worker podman stop folio-smoke-worker
  podman rm -f -v folio-smoke folio-smoke-worker >/dev/null 2>&1
}

# The image's scale-out commands, when this machine has PostgreSQL and ClickHouse (the test servers of
# the scale leg), in containers on the host's network: folio migrate, serve --no-workers and worker.
run_scale() {
  local pg_admin=${FOLIO_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres} ch=${FOLIO_TEST_CLICKHOUSE_URL:-http://127.0.0.1:8123}
  if ! psql "$pg_admin" -qAtc 'select 1' >/dev/null 2>&1 || ! curl -sf "$ch/ping" >/dev/null; then
    skip "scale-out containers (no PostgreSQL at $pg_admin or ClickHouse at $ch)"
    return
  fi
  local db port=$((PORT + 1)) env=() e
  db=folio_smoke_$(date +%s)
  psql "$pg_admin" -qc "create database $db" || { fail "create database $db"; return; }
  scale_cleanup="psql '$pg_admin' -qc 'drop database if exists $db with (force)'; curl -s '$ch' --data-binary 'DROP DATABASE IF EXISTS $db' >/dev/null"
  for e in "${FOLIO_ENV[@]}" "DATABASE_URL=${pg_admin%/*}/$db" "CLICKHOUSE_URL=$ch/$db" "FOLIO_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" HOST=127.0.0.1 "PORT=$port"; do env+=(-e "$e"); done
  local scale=("${RUN[@]}" --network host "${env[@]}")
  migrate_scale() { "${scale[@]}" --rm "$IMAGE" migrate 2>/dev/null | grep -q 'Analytics (clickhouse), applied'; }
  check 'scale: folio migrate (PostgreSQL and ClickHouse)' migrate_scale
  project=$("${scale[@]}" --rm "$IMAGE" project create --name Scale --repository "$repository" --code-host github --json 2>/dev/null | json 'v.id')
  key=$("${scale[@]}" --rm "$IMAGE" key create --project "$project" --json 2>/dev/null | json 'v.key')
  "${scale[@]}" -d --name folio-smoke-api "$IMAGE" serve --no-workers >/dev/null 2>>"$WORK/podman.log"
  "${scale[@]}" "${SANDBOX[@]}" -d --name folio-smoke-scale-worker "$IMAGE" worker >/dev/null 2>>"$WORK/podman.log"
  check 'scale: folio serve --no-workers answers /readyz' wait_ready "http://127.0.0.1:$port"
  check 'scale: the worker container is healthy' wait_healthy folio-smoke-scale-worker
  check "scale: a job completed by the worker container (the API runs no workers)" job_completes "http://127.0.0.1:$port" 'Check the docs'
  api "http://127.0.0.1:$port" POST "/v1/analytics/$project/events" "{\"events\":[{\"path\":\"/a\",\"userAgent\":\"$UA\",\"ip\":\"203.0.113.7\"},{\"path\":\"/a\",\"userAgent\":\"$UA\",\"ip\":\"203.0.113.7\"},{\"path\":\"/b\",\"userAgent\":\"$UA\",\"ip\":\"203.0.113.9\"}]}" >/dev/null
  local totals
  totals=$(visitors "http://127.0.0.1:$port")
  check "scale: exact visitors from ClickHouse $totals = {human 2, ai 0, total 2}" test "$totals" = '{"human":2,"ai":0,"total":2}'
  podman rm -f -v folio-smoke-api folio-smoke-scale-worker >/dev/null 2>&1
}

run_compose() {
  local base=http://127.0.0.1:$((PORT + 2)) e name id
  mkdir -p "$WORK/compose"
  cp deploy/compose.single.yaml deploy/compose.yaml deploy/nginx.conf "$WORK/compose/"
  # deploy/.env as a user writes it (here: the fakes as model and code host, a loopback port).
  { for e in "${FOLIO_ENV[@]}"; do echo "$e"; done; echo "FOLIO_PORT=127.0.0.1:$((PORT + 2))"; echo "FOLIO_SANDBOX_SECURITY_OPT=$SANDBOX_OPT"; } >"$WORK/compose/.env"
  # The one addition: the service joins the smoke network, where the code host and model are.
  printf 'networks:\n  default:\n    name: %s\n    external: true\n' "$NET" >"$WORK/compose/smoke.yaml"
  CONTAINERS_CONF=$WORK/containers.conf
  printf '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=8192:8192"]\n[engine]\nruntime = "runc"\n' >"$CONTAINERS_CONF"
  CONTAINERS_CONF=$CONTAINERS_CONF podman system service --time=0 "unix://$WORK/podman.sock" >"$WORK/service.log" 2>&1 &
  service_pid=$!
  for _ in $(seq 1 50); do [ -S "$WORK/podman.sock" ] && break; sleep 0.1; done
  check "compose -f compose.single.yaml up -d (Docker Compose $("$COMPOSE" version --short) on podman system service)" compose up -d --no-build
  name=$(compose ps --format '{{.Name}}' folio 2>/dev/null)
  check 'compose: folio answers /readyz through the published port' wait_ready "$base"
  check 'compose: the HEALTHCHECK passes' wait_healthy "$name"
  check "compose ps says $(compose ps --format '{{.Health}}' folio 2>/dev/null)" test "$(compose ps --format '{{.Health}}' folio 2>/dev/null)" = healthy
  project=$(compose exec -T folio folio project create --name Compose --repository "$repository" --code-host github --build-command "$CONTAINED" --json 2>>"$WORK/checks.log" | json 'v.id')
  key=$(compose exec -T folio folio key create --project "$project" --json 2>>"$WORK/checks.log" | json 'v.key')
  check "compose exec folio folio project create --build-command …, key create ($project)" test -n "$key"
  check 'compose: agent job completed' job_completes "$base" 'Document the --dry-run flag'
  build_report "$base"
  check "compose: its site build ran in the sandbox (security_opt from FOLIO_SANDBOX_SECURITY_OPT=$SANDBOX_OPT in .env) and was contained ($(json 'v.tool + " " + v.status' <"$WORK/build.json"))" json 'v.tool === "custom" && v.status === "passed" || process.exit(1)' <"$WORK/build.json"
  api "$base" POST "/v1/analytics/$project/events" "{\"events\":[{\"path\":\"/a\",\"userAgent\":\"$UA\",\"ip\":\"203.0.113.7\"},{\"path\":\"/b\",\"userAgent\":\"claude-code/2.0.14\",\"ip\":\"198.51.100.4\"}]}" >/dev/null
  local totals after
  totals=$(visitors "$base")
  check "compose: exact visitors $totals = {human 1, ai 1, total 2}" test "$totals" = '{"human":1,"ai":1,"total":2}'
  logs_listening() { compose logs folio >"$WORK/compose-logs.txt" 2>&1 && grep -q 'Folio is listening' "$WORK/compose-logs.txt"; }
  check 'compose logs folio: its log lines' logs_listening
  logs_setup_link() { grep -q 'Create the owner account: http://[^ ]*/setup#token=' "$WORK/compose-logs.txt"; }
  check 'compose logs folio: the first-run setup link with its token' logs_setup_link
  id=$(compose ps -q folio 2>/dev/null)
  check 'compose up -d --force-recreate: a new container on the volume' compose up -d --no-build --force-recreate
  check "compose: a new container (${id:0:12} → $(compose ps -q folio 2>/dev/null | cut -c1-12))" test "$(compose ps -q folio 2>/dev/null)" != "$id"
  check 'compose: the new container answers /readyz' wait_ready "$base"
  after=$(api "$base" GET "/v2/agent/$project/job/$job" | json 'v.status')
  totals=$(visitors "$base")
  check "compose: data kept: the key, job $job ($after), visitors $totals" test "$after/$totals" = 'completed/{"human":1,"ai":1,"total":2}'
  name=$(compose ps --format '{{.Name}}' folio 2>/dev/null)
  timed_stop 'compose stop' "$name" compose stop
  down_removes() { compose down -v && ! podman volume exists "${COMPOSE_PROJECT}_folio-data" && ! podman container exists "$name"; }
  check 'compose down -v removes the container and the volume' down_removes
}

# Both compose files as Compose reads them: v2, and Debian bookworm's docker-compose 1.29 when it is
# installed (compose.single.yaml is written for it too). compose.yaml is refused without FOLIO_SECRET.
compose_files() {
  local c version dir=$WORK/compose-files
  for c in "$COMPOSE" "$(command -v docker-compose)"; do
    version=$("$c" version --short 2>/dev/null) || continue
    [ "$c" != "$COMPOSE" ] && [ "${version#1.}" = "$version" ] && continue # another v2: already done
    rm -rf "$dir" && mkdir -p "$dir" && cp deploy/compose.single.yaml deploy/compose.yaml deploy/nginx.conf "$dir/"
    printf 'POSTGRES_PASSWORD=p\nCLICKHOUSE_PASSWORD=c\nFOLIO_SANDBOX_SECURITY_OPT=%s\n' "$SANDBOX_OPT" >"$dir/.env"
    sandboxed() { "$c" --project-directory "$dir" -f "$dir/$1" config >"$WORK/config.txt" && grep -qF -- "- $SANDBOX_OPT" "$WORK/config.txt"; }
    check "Compose $version reads compose.single.yaml, with FOLIO_SANDBOX_SECURITY_OPT as security_opt" sandboxed compose.single.yaml
    refused() { ! "$c" --project-directory "$dir" -f "$dir/compose.yaml" config >/dev/null 2>"$WORK/refused.txt" && grep -q 'set FOLIO_SECRET in deploy/.env' "$WORK/refused.txt"; }
    check "Compose $version refuses compose.yaml without FOLIO_SECRET, naming it" refused
    echo 'FOLIO_SECRET=s' >>"$dir/.env"
    check "Compose $version reads compose.yaml with it, with FOLIO_SANDBOX_SECURITY_OPT as security_opt" sandboxed compose.yaml
  done
}

prerequisites
build
image_settings
start_fakes
run_container
run_scale
run_compose
compose_files
if [ "$failures" -gt 0 ]; then
  echo "--- checks log"; tail -40 "$WORK/checks.log"
  echo "--- podman log"; tail -10 "$WORK/podman.log" 2>/dev/null
  for c in "${CONTAINERS[@]}"; do podman container exists "$c" && { echo "--- $c"; podman logs --tail 20 "$c" 2>&1; }; done
fi
# The closing line CI reads.
echo "container-smoke: $passes passed, $failures failed$([ "$skips" -gt 0 ] && echo ", $skips skipped")"
[ "$failures" -eq 0 ]
