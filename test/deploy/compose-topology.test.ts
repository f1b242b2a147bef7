// deploy/compose.yaml, checked and run: its structure and the nginx config (every leg, parsing only),
// then its topology as processes on this machine (scale leg: PostgreSQL + ClickHouse): one
// `folio migrate`, two `folio serve --no-workers`, one `folio worker`, each with exactly the
// environment the image and the compose file give that service (plus the .env a user writes), each
// on its own loopback address as each container has its own, and nginx in front of the API
// processes when it is installed, finding them through a DNS server as through a container network's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { eventually } from '../helpers/handlers.ts';
import { backendDatabases, CLICKHOUSE_TEST_URL, isScale, type BackendDatabases } from '../helpers/backend.ts';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { LOCAL_GIT_ENV, startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';
import { sequence, startFakeOpenAI, toolCall, type FakeOpenAI } from '../fixtures/fake-openai.ts';

type Env = Record<string, string>;
interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Env;
  env_file?: string | (string | { path: string; required?: boolean })[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  networks?: Record<string, { aliases?: string[] } | null>;
  ports?: string[];
  volumes?: string[];
  restart?: string;
  security_opt?: string[];
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const NEEDS = '(needs PostgreSQL and ClickHouse: FOLIO_TEST_BACKEND=scale, FOLIO_TEST_CLICKHOUSE_URL)';
const ENABLED = isScale && CLICKHOUSE_TEST_URL !== '';

/** Compose's interpolation of ${VAR}, ${VAR:-default} and ${VAR:?error} from the .env file. */
function interpolate(value: unknown, dotenv: Env): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
      const v = dotenv[name];
      if (v !== undefined && v !== '') return v;
      if (op === '?') throw new Error(`compose: ${arg}`);
      return op === '-' ? arg! : '';
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, dotenv));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, dotenv)]));
  return value;
}

function loadCompose(file: string, dotenv: Env): Compose {
  // merge: the `<<: *folio` keys that share one definition among the Folio services.
  return interpolate(parse(readFileSync(path.join(ROOT, 'deploy', file), 'utf8'), { merge: true }), dotenv) as Compose;
}

/** The ENV of the Containerfile's final stage: what every container starts with. */
function imageEnv(): Env {
  const text = readFileSync(path.join(ROOT, 'Containerfile'), 'utf8').replace(/\\\n/g, ' ');
  const lines = text.split('\n').filter((l) => /^ENV\s/.test(l));
  return Object.fromEntries(lines.flatMap((l) => [...l.slice(4).matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])));
}

/** What compose gives a service's container: the image's env, then env_file (.env), then environment. */
function containerEnv(service: Service, dotenv: Env): Env {
  const files = service.env_file === undefined ? [] : Array.isArray(service.env_file) ? service.env_file : [service.env_file];
  const fromFiles = files.some((f) => (typeof f === 'string' ? f : f.path) === '.env') ? dotenv : {};
  return { ...imageEnv(), ...fromFiles, ...service.environment };
}

/**
 * The one place where a container's environment becomes this machine's: URLs naming a compose
 * service (`postgres`, `clickhouse`) point at the test's fresh databases; each process listens on a
 * loopback address of its own and on one port shared by all (containers each have their own address
 * and the same 8080), and has its own data dir (its container's /data). Everything else is passed as
 * compose gives it.
 */
function onThisMachine(env: Env, local: { services: Record<string, string>; address: string; port: number; dataDir: string }): Env {
  const out: Env = {};
  for (const [name, value] of Object.entries(env)) {
    const host = URL.canParse(value) ? new URL(value).hostname : null;
    if (host !== null && host in local.services) out[name] = local.services[host];
    else if (name === 'HOST') out[name] = local.address;
    else if (name === 'PORT') out[name] = String(local.port);
    else if (name === 'FOLIO_DATA_DIR') out[name] = local.dataDir;
    else out[name] = value;
  }
  return out;
}

/** deploy/nginx.conf: where it sends requests (the `$folio_api` URL), its listen port, and its text. */
function nginxConfig(): { text: string; upstream: URL; listen: string[] } {
  const text = readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8');
  return {
    text,
    upstream: new URL(/^\s*set \$folio_api (\S+);/m.exec(text)![1]),
    listen: [...text.matchAll(/^\s*listen\s+([^\s;]+)/gm)].map((m) => m[1]),
  };
}

/** What the nginx image's entry point does with the template: ${NGINX_LOCAL_RESOLVERS} filled in. */
const renderNginxTemplate = (text: string, resolvers: string) => text.replaceAll('${NGINX_LOCAL_RESOLVERS}', resolvers);

const DOTENV_FOR_CHECKS: Env = { FOLIO_SECRET: 'f'.repeat(64), POSTGRES_PASSWORD: 'pg-pass', CLICKHOUSE_PASSWORD: 'ch-pass' };
const folioServices = (c: Compose) => Object.entries(c.services).filter(([, s]) => s.build !== undefined || s.image === 'folio:local');

describe('deploy/compose.yaml and deploy/nginx.conf', () => {
  const compose = loadCompose('compose.yaml', DOTENV_FOR_CHECKS);
  const s = compose.services;

  it('has the scale-out services, each Folio one running the image with the right command', () => {
    expect(Object.keys(s).sort()).toEqual(['api-1', 'api-2', 'clickhouse', 'migrate', 'postgres', 'proxy', 'worker']);
    expect(s.migrate.command).toEqual(['migrate']);
    expect(s['api-1'].command).toEqual(['serve', '--no-workers']);
    expect(s['api-2'].command).toEqual(['serve', '--no-workers']);
    expect(s.worker.command).toEqual(['worker']);
    expect(folioServices(compose).map(([name]) => name).sort()).toEqual(['api-1', 'api-2', 'migrate', 'worker']);
    expect(s.clickhouse.image).toMatch(/^clickhouse\/clickhouse-server:\d+\.\d+$/);
  });

  it('starts in order of health: databases healthy, migrate completed, API processes healthy, proxy', () => {
    expect(s.migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, clickhouse: { condition: 'service_healthy' } });
    expect(s.migrate.restart).toBe('no');
    for (const name of ['api-1', 'api-2', 'worker']) expect(s[name].depends_on, name).toEqual({ migrate: { condition: 'service_completed_successfully' } });
    expect(s.proxy.depends_on).toEqual({ 'api-1': { condition: 'service_healthy' }, 'api-2': { condition: 'service_healthy' } });
    for (const name of ['postgres', 'clickhouse', 'api-1', 'api-2', 'proxy']) expect(s[name].healthcheck?.test?.length, name).toBeGreaterThan(0);
    // The image's HEALTHCHECK (`folio healthcheck`) fits the worker; only the one-off migrate turns it off.
    expect(s.migrate.healthcheck).toEqual({ disable: true });
    expect(s.worker.healthcheck).toBeUndefined();
    for (const name of ['api-1', 'api-2']) expect(s[name].healthcheck!.test!.join(' '), name).toContain(`127.0.0.1:${imageEnv().PORT}/readyz`);
  });

  it('gives every Folio service the one FOLIO_SECRET of .env and the same databases, matching the database services', () => {
    const envs = folioServices(compose).map(([, svc]) => containerEnv(svc, DOTENV_FOR_CHECKS));
    for (const env of envs) {
      expect(env.FOLIO_SECRET).toBe(DOTENV_FOR_CHECKS.FOLIO_SECRET);
      expect(env.DATABASE_URL).toBe(envs[0].DATABASE_URL);
      expect(env.CLICKHOUSE_URL).toBe(envs[0].CLICKHOUSE_URL);
      expect(env.FOLIO_DATA_DIR).toBe('/data');
    }
    const pgUrl = new URL(envs[0].DATABASE_URL);
    const pg = s.postgres.environment!;
    expect([pgUrl.hostname, pgUrl.port, pgUrl.username, pgUrl.password, pgUrl.pathname]).toEqual(['postgres', '5432', pg.POSTGRES_USER, pg.POSTGRES_PASSWORD, `/${pg.POSTGRES_DB}`]);
    const chUrl = new URL(envs[0].CLICKHOUSE_URL);
    const ch = s.clickhouse.environment!;
    expect([chUrl.hostname, chUrl.port, chUrl.username, chUrl.password, chUrl.pathname]).toEqual(['clickhouse', '8123', ch.CLICKHOUSE_USER, ch.CLICKHOUSE_PASSWORD, `/${ch.CLICKHOUSE_DB}`]);
    // Compose refuses to start without any of them: every process must share the secret, and the
    // databases need their passwords.
    for (const name of Object.keys(DOTENV_FOR_CHECKS)) {
      const without = Object.fromEntries(Object.entries(DOTENV_FOR_CHECKS).filter(([k]) => k !== name));
      expect(() => loadCompose('compose.yaml', without), name).toThrow(`set ${name} in deploy/.env`);
    }
  });

  it('nginx sends requests to the name every API service answers to, resolved per request, on the port the proxy publishes', () => {
    const conf = nginxConfig();
    const apis = Object.entries(s).filter(([, svc]) => svc.command?.[0] === 'serve');
    expect(apis.map(([name]) => name).sort()).toEqual(['api-1', 'api-2']);
    for (const [name, svc] of apis) expect(svc.networks?.default?.aliases, name).toEqual([conf.upstream.hostname]);
    // No other service answers to that name.
    for (const [name, svc] of Object.entries(s)) if (svc.command?.[0] !== 'serve') expect(svc.networks, name).toBeUndefined();
    expect(conf.upstream.port).toBe(imageEnv().PORT);
    // A variable in proxy_pass, and a resolver: nginx resolves the name at request time, not at start.
    expect(conf.text).toMatch(/^\s*proxy_pass \$folio_api;/m);
    expect(conf.text).toMatch(/^\s*resolver \$\{NGINX_LOCAL_RESOLVERS\} valid=\d+s/m);
    expect(conf.text).not.toMatch(/^\s*upstream\s/m);
    // The file is the nginx image's template, with the container's DNS servers filled in. Its
    // entry point substitutes every environment variable it has, so each other `$` must be one of
    // nginx's own (lower case), never a name the environment could hold.
    expect(s.proxy.volumes).toEqual(['./nginx.conf:/etc/nginx/templates/nginx.conf.template:ro']);
    const dollars = [...conf.text.replace(/^\s*#.*$/gm, '').matchAll(/\$\{?(\w+)/g)].map((m) => m[1]);
    expect(dollars.filter((name) => name !== 'NGINX_LOCAL_RESOLVERS' && name !== name.toLowerCase())).toEqual([]);
    expect(dollars).toContain('NGINX_LOCAL_RESOLVERS');
    expect(s.proxy.environment).toEqual({ NGINX_ENTRYPOINT_LOCAL_RESOLVERS: '1', NGINX_ENVSUBST_OUTPUT_DIR: '/etc/nginx' });
    expect(s.proxy.ports).toEqual([`8080:${conf.listen[0]}`]);
  });

  it('gives the services that run jobs, and only those, the build sandbox\'s security_opt from .env (docs/deployment.md)', () => {
    // serve with workers and worker run jobs; serve --no-workers and migrate never build a site.
    const runsJobs = (svc: Service) => svc.command?.[0] === 'worker' || (svc.command ?? ['serve']).join(' ') === 'serve';
    const services = (dotenv: Env) => [...folioServices(loadCompose('compose.yaml', dotenv)), ...Object.entries(loadCompose('compose.single.yaml', dotenv).services)];
    expect(services(DOTENV_FOR_CHECKS).filter(([, svc]) => runsJobs(svc)).map(([name]) => name).sort()).toEqual(['folio', 'worker']);
    // Unset: only what every runtime accepts (jobs run, builds are skipped saying why); set: the runtime's option.
    for (const [opt, dotenv] of [
      ['no-new-privileges', DOTENV_FOR_CHECKS],
      ['unmask=/proc/*', { ...DOTENV_FOR_CHECKS, FOLIO_SANDBOX_SECURITY_OPT: 'unmask=/proc/*' }],
    ] as const) {
      for (const [name, svc] of services(dotenv)) expect(svc.security_opt, name).toEqual(runsJobs(svc) ? [opt] : undefined);
    }
  });

  it('compose.single.yaml runs the single-process default with its data in a volume, in any Compose', () => {
    const single = loadCompose('compose.single.yaml', {});
    expect(Object.keys(single.services)).toEqual(['folio']);
    const folio = single.services.folio;
    expect(folio.command).toBeUndefined(); // the image's default: serve, with workers
    expect(folio.volumes).toEqual(['folio-data:/data']);
    expect(Object.keys(single.volumes ?? {})).toEqual(['folio-data']);
    expect(folio.ports).toEqual([`8080:${imageEnv().PORT}`]);
    expect(loadCompose('compose.single.yaml', { FOLIO_PORT: '127.0.0.1:8081' }).services.folio.ports).toEqual([`127.0.0.1:8081:${imageEnv().PORT}`]);
    // The short env_file form: `path` and `required` need Compose 2.24, and older ones refuse the file.
    expect(folio.env_file).toBe('.env');
  });
});

interface Proc {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `folio ARGS…` with exactly `env` (plus PATH and HOME, which the container runtime sets too). */
function folio(args: string[], env: Env): Proc {
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin/folio.mjs'), ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, output: () => out, exited };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).stdout.toString().trim() || null;

/** A container of the topology on this machine: its process, its environment, its address. */
interface Container extends Proc {
  env: Env;
  address: string;
}

describe.skipIf(!ENABLED)(`the compose topology as processes ${NEEDS}`, () => {
  const TOKEN = 'ghp_compose_topology_0123456789';
  const running: Container[] = [];
  const dirs: string[] = [];
  let databases: BackendDatabases;
  let host: CodeHostServer;
  let llm: FakeOpenAI;
  let dotenv: Env;
  let compose: Compose;
  /** The port every container listens on (their 8080), each on its own loopback address. */
  let port: number;
  let addresses = 0;
  const containers: Record<string, Container> = {};
  const urls: Record<string, string> = {};
  let project: string;
  let key: string;

  /** The environment of a new container of one compose service, on this machine. */
  const envOf = (service: string, address: string): Env => {
    const dataDir = tempDir('folio-compose-');
    dirs.push(dataDir);
    const services = { postgres: databases.env.DATABASE_URL, clickhouse: databases.env.CLICKHOUSE_URL };
    return onThisMachine(containerEnv(compose.services[service], dotenv), { services, address, port, dataDir });
  };
  const newAddress = () => `127.0.35.${++addresses}`;
  /** `docker compose run <service> ARGS…`: a one-off container. */
  const run = async (service: string, args: string[]): Promise<{ code: number | null; output: string }> => {
    const p = folio(args, envOf(service, newAddress()));
    return { code: await p.exited, output: p.output() };
  };
  /** `docker compose exec <service> folio ARGS…`: in the running container (its environment, its /data). */
  const exec = async (service: string, args: string[]): Promise<{ code: number | null; output: string }> => {
    const p = folio(args, containers[service].env);
    return { code: await p.exited, output: p.output() };
  };
  /** Starts (or recreates, at a new address) a service's container and waits for `ready` in its output. */
  const start = async (service: string, ready: RegExp): Promise<Container> => {
    const address = newAddress();
    const env = envOf(service, address);
    const c: Container = { ...folio(compose.services[service].command!, env), env, address };
    running.push(c);
    containers[service] = c;
    await eventually(async () => ready.test(c.output()) || c.proc.exitCode !== null, 30_000, 50);
    expect(c.proc.exitCode, c.output()).toBeNull();
    if (compose.services[service].command![0] === 'serve') urls[service] = /"url":"(http[^"]+)"/.exec(c.output())![1];
    return c;
  };
  const stop = async (service: string) => {
    containers[service].proc.kill('SIGTERM');
    expect(await containers[service].exited).toBe(0);
  };
  const api = async (base: string, method: string, urlPath: string, body?: unknown) => {
    const res = await fetch(base + urlPath, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    databases = await backendDatabases();
    host = await startCodeHost({ token: TOKEN });
    llm = await startFakeOpenAI();
    port = await freePort();
    // deploy/.env as a user writes it: the secrets, then the model and code host (here: the fakes).
    dotenv = {
      FOLIO_SECRET: randomBytes(32).toString('hex'),
      POSTGRES_PASSWORD: 'unused-here',
      CLICKHOUSE_PASSWORD: 'unused-here',
      FOLIO_MODEL: 'openai-compatible/compose-model',
      OPENAI_COMPATIBLE_BASE_URL: llm.baseUrl,
      GITHUB_TOKEN: TOKEN,
      GITHUB_API_URL: `${host.origin}/api/v3`,
      ...LOCAL_GIT_ENV,
    };
    compose = loadCompose('compose.yaml', dotenv);
  });

  afterAll(async () => {
    for (const p of running) if (p.proc.exitCode === null) p.proc.kill('SIGTERM');
    await Promise.all(running.map((p) => p.exited));
    await llm?.close();
    await host?.close();
    await databases?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('migrate runs once and exits 0; the API processes and the worker start on the migrated stores', async () => {
    const migrated = await run('migrate', compose.services.migrate.command!);
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.output).toContain('State store, applied: 001_core');
    expect(migrated.output).toMatch(/Analytics \(clickhouse\), applied: 1/);
    const again = await run('migrate', compose.services.migrate.command!);
    expect(again.output).toContain('State store: already up to date.');
    for (const name of ['api-1', 'api-2']) {
      const p = await start(name, /"msg":"Folio is listening"/);
      expect(p.output()).toContain('"workers":0');
      expect(urls[name]).toBe(`http://${p.address}:${port}`);
    }
    await start('worker', /Folio workers running/);
    for (const url of Object.values(urls)) expect((await fetch(`${url}/readyz`)).status).toBe(200);
    // The operator's one-off commands run in a container of the API service (`docker compose run`).
    const repo = host.createRepo('acme/docs', { 'docs.json': '{"name":"Acme","navigation":[{"group":"Start","pages":["index"]}]}\n', 'index.mdx': '# Acme\n\nRun `acme build`.\n' });
    const created = await run('api-1', ['project', 'create', '--name', 'Compose', '--repository', repo, '--code-host', 'github', '--json']);
    project = JSON.parse(created.output).id;
    key = JSON.parse((await run('api-1', ['key', 'create', '--project', project, '--json'])).output).key;
  });

  it("the image's health check (folio healthcheck) passes in every long-running service: API processes and the worker", async () => {
    for (const name of ['api-1', 'api-2']) {
      const health = await exec(name, ['healthcheck']);
      expect(health, name).toEqual({ code: 0, output: `healthy: folio serve (pid ${containers[name].proc.pid}) answers ${urls[name]}/healthz\n` });
    }
    const worker = await exec('worker', ['healthcheck']);
    expect(worker.code, worker.output).toBe(0);
    expect(worker.output).toMatch(new RegExp(`^healthy: folio worker \\(pid ${containers.worker.proc.pid}\\), last beat \\d+ s ago\\n$`));
  });

  it('a job created through one API process is run by the worker and read through the other', async () => {
    llm.setResponder(
      sequence([
        toolCall('edit_file', { path: 'index.mdx', old_string: 'Run `acme build`.', new_string: 'Run `acme build --dry-run` to preview.' }),
        toolCall('finish', { title: 'Document --dry-run', summary: 'Added --dry-run.' }),
      ]),
    );
    const created = await api(urls['api-1'], 'POST', `/v2/agent/${project}/job`, { prompt: 'Document --dry-run' });
    expect(created.status).toBe(201);
    const job = await eventually(async () => {
      const j = (await api(urls['api-2'], 'GET', `/v2/agent/${project}/job/${created.body.id}`)).body;
      return j.status !== 'active' ? j : null;
    }, 30_000, 100);
    expect(job.status, JSON.stringify(job)).toBe('completed');
    expect(job.prLink).toBe(`${host.origin}/acme/docs/pull/1`);
    expect(host.show('acme/docs', `folio/${job.id}`, 'index.mdx')).toContain('acme build --dry-run');
    expect(llm.requests.length).toBeGreaterThanOrEqual(2);
  });

  it('analytics events posted to both API processes give the same exact visitors from either', async () => {
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
    const post = (url: string, events: object[]) => api(url, 'POST', `/v1/analytics/${project}/events`, { events });
    const a = await post(urls['api-1'], [
      { path: '/docs', userAgent: firefox, ip: '203.0.113.1' },
      { path: '/docs', userAgent: firefox, ip: '203.0.113.2' },
      { path: '/docs', userAgent: 'claude-code/2.0.14', ip: '198.51.100.4' },
    ]);
    const b = await post(urls['api-2'], [
      { path: '/docs', userAgent: firefox, ip: '203.0.113.1' }, // the same visitor as on api-1: one secret, one hash
      { path: '/guide', userAgent: firefox, ip: '203.0.113.3' },
    ]);
    expect([a.status, a.body.accepted, b.status, b.body.accepted]).toEqual([202, 3, 202, 2]);
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const query = `/v1/analytics/${project}/visitors?dateFrom=${day(-1)}&dateTo=${day(1)}`;
    const expected = {
      totals: { human: 3, ai: 1, total: 4 },
      visitors: [
        { path: '/docs', human: 2, ai: 1, total: 3 },
        { path: '/guide', human: 1, ai: 0, total: 1 },
      ],
      hasMore: false,
    };
    for (const url of Object.values(urls)) {
      const res = await api(url, 'GET', query);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
    }
  });

  // Debian puts nginx in /usr/sbin, which a non-login PATH may lack.
  const nginx = which('nginx') ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : null);
  describe.skipIf(!nginx)(`nginx with deploy/nginx.conf${nginx ? '' : ' (skipped: nginx is not installed)'}`, () => {
    let dns: DnsServer;
    let dir: string;
    let base: string;
    let proxy: ChildProcess;
    let proxyExited: Promise<unknown>;
    const alias = () => nginxConfig().upstream.hostname;
    /** What the container network's DNS answers for the alias: the API containers running now. */
    const announce = () => dns.set(alias(), ['api-1', 'api-2'].map((name) => containers[name].address));
    const requestsLogged = (name: string) => containers[name].output().split('\n').filter((l) => l.includes('"msg":"incoming request"')).length;
    /** `count` requests through the proxy: every one must be answered by an API process. */
    const throughProxy = async (count: number) => {
      for (let i = 0; i < count; i++) expect((await api(base, 'GET', `/v2/agent/${project}/jobs`)).status).toBe(200);
    };
    /** Requests through the proxy, all answered, until `name` has logged some (the proxy found its new address). */
    const reachedThroughProxy = (name: string) => {
      const before = requestsLogged(name);
      return eventually(async () => {
        await throughProxy(5);
        return requestsLogged(name) > before;
      }, 30_000, 100);
    };

    beforeAll(async () => {
      dns = await startDnsServer();
      announce();
      dir = tempDir('folio-nginx-');
      dirs.push(dir);
      const listen = await freePort();
      // The same file, as the nginx image's entry point renders it (here with the test's DNS server),
      // the API processes' port and the proxy's listen address made local (and nginx's own files in dir).
      const conf = renderNginxTemplate(nginxConfig().text, dns.address)
        .replace(`http://${alias()}:${imageEnv().PORT};`, `http://${alias()}:${port};`)
        .replace(/listen \d+;/, `listen 127.0.0.1:${listen};`)
        .replace('access_log /dev/stdout;', `access_log ${dir}/access.log;`);
      writeFileSync(path.join(dir, 'nginx.conf'), conf);
      const test = spawnSync(nginx!, ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log'), '-g', `pid ${dir}/nginx.pid;`]);
      expect(test.status, test.stderr.toString()).toBe(0);
      proxy = spawn(nginx!, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log'), '-g', `daemon off; pid ${dir}/nginx.pid;`], { stdio: 'ignore' });
      proxyExited = new Promise((r) => proxy.on('exit', r));
      base = `http://127.0.0.1:${listen}`;
      await eventually(async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200, 10_000, 50);
    });

    afterAll(async () => {
      proxy?.kill('SIGTERM');
      await proxyExited;
      await dns?.close();
    });

    it('reaches both API processes by their shared name', async () => {
      for (const name of ['api-1', 'api-2']) await reachedThroughProxy(name);
      expect(dns.queries(alias())).toBeGreaterThan(0);
    });

    it('keeps answering while both API processes are recreated at new addresses (up -d --build), with no reload', async () => {
      const oldAddresses = ['api-1', 'api-2'].map((name) => containers[name].address);
      for (const name of ['api-1', 'api-2']) {
        await stop(name);
        // Until the DNS says otherwise, a request sent to the old address goes to the other process.
        await throughProxy(10);
        await start(name, /"msg":"Folio is listening"/);
        announce();
        await reachedThroughProxy(name);
      }
      const newAddresses = ['api-1', 'api-2'].map((name) => containers[name].address);
      expect(newAddresses.filter((a) => oldAddresses.includes(a))).toEqual([]);
      // The same nginx process throughout: nothing reloaded it.
      expect(proxy.exitCode).toBeNull();
      expect(readFileSync(path.join(dir, 'nginx.pid'), 'utf8').trim()).toBe(String(proxy.pid));
    });

    it('does not forward /metrics', async () => {
      for (const p of ['/metrics', '/metrics/', '/metrics?x=1', '/%6Detrics']) {
        const res = await fetch(base + p);
        expect(res.status, p).toBe(404);
        expect(await res.json(), p).toEqual({ error: '/metrics is not served through the proxy.', code: 'route_not_found' });
      }
      for (const name of ['api-1', 'api-2']) expect(containers[name].output(), name).not.toMatch(/"url":"\/(metrics|%6Detrics)/);
    });
  });
});
