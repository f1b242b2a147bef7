// Configuration: defaults, validation messages, the generated secret.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, parseDuration } from '../../src/config.ts';
import { childProcessEnv } from '../../src/child-env.ts';
import { tempDir } from '../helpers/server.ts';

describe('config', () => {
  it('has the documented defaults', () => {
    const dir = tempDir();
    const c = loadConfig({ FOLIO_DATA_DIR: dir });
    expect(c.port).toBe(8080);
    expect(c.host).toBe('127.0.0.1');
    expect(c.workers).toBe(2);
    expect(c.rateLimits).toMatchObject({ createJobPerHour: 100, followUpPerHour: 100, analyticsReadsPerHour: 1000 });
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
    expect(c.trustProxy).toBe(false);
    expect(loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(c.models.allowed).toContain(c.models.defaultModel);
    expect(Object.isFrozen(c.rateLimits)).toBe(true);
    rmSync(dir, { recursive: true });
  });

  it('generates the secret once and keeps it private in the data dir', () => {
    const dir = tempDir();
    const a = loadConfig({ FOLIO_DATA_DIR: dir });
    const b = loadConfig({ FOLIO_DATA_DIR: dir });
    expect(a.secret).toBe(b.secret);
    expect(a.secret.length).toBeGreaterThanOrEqual(32);
    const file = path.join(dir, 'secret');
    expect(readFileSync(file, 'utf8').trim()).toBe(a.secret);
    expect(statSync(file).mode & 0o077).toBe(0);
    // Written aside and linked into place: nothing else is left behind.
    expect(readdirSync(dir)).toEqual(['secret']);
    rmSync(dir, { recursive: true });
  });

  it('derives the setup token from the secret (the same in every process sharing it), unless FOLIO_SETUP_TOKEN is set; the metrics token only when set', () => {
    const dirs = [tempDir(), tempDir()];
    const secret = 'shared-secret-0123456789abcdef';
    const [a, b] = dirs.map((dir) => loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_SECRET: secret }));
    expect(a.setupToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b.setupToken).toBe(a.setupToken);
    expect(a.setupToken).not.toContain(secret.slice(0, 8));
    const other = loadConfig({ FOLIO_DATA_DIR: dirs[0], FOLIO_SECRET: 'another-secret-0123456789abcdef' });
    expect(other.setupToken).not.toBe(a.setupToken);
    // A generated secret gives a token too, stable across restarts.
    expect(loadConfig({ FOLIO_DATA_DIR: dirs[1] }).setupToken).toBe(loadConfig({ FOLIO_DATA_DIR: dirs[1] }).setupToken);
    expect(loadConfig({ FOLIO_DATA_DIR: dirs[0], FOLIO_SETUP_TOKEN: ' chosen-by-the-operator-42 ' }).setupToken).toBe('chosen-by-the-operator-42');
    expect(a.metricsToken).toBeNull();
    expect(loadConfig({ FOLIO_DATA_DIR: dirs[0], FOLIO_METRICS_TOKEN: 'scrape-token-0123456789' }).metricsToken).toBe('scrape-token-0123456789');
    for (const dir of dirs) rmSync(dir, { recursive: true });
  });

  it.each([
    [{ PORT: '-1' }, /^PORT must be between 0 and 65535, got -1\.$/],
    [{ PORT: '80.5' }, /^PORT must be a whole number, got "80\.5"\.$/],
    [{ FOLIO_ACCESS_LOG: 'maybe' }, /^FOLIO_ACCESS_LOG must be true or false, got "maybe"\.$/],
    [{ FOLIO_BODY_LIMIT: '10' }, /^FOLIO_BODY_LIMIT must be at least 1024, got 10\.$/],
    [{ PORT: '70000' }, /PORT must be between/],
    [{ FOLIO_WORKERS: 'two' }, /FOLIO_WORKERS/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ FOLIO_SECRET: 'short' }, /at least 16/],
    [{ FOLIO_SETUP_TOKEN: 'short' }, /FOLIO_SETUP_TOKEN must be 16 to 512 visible ASCII characters \(no spaces\)/],
    [{ FOLIO_SETUP_TOKEN: 'a setup token with spaces' }, /FOLIO_SETUP_TOKEN must be/],
    [{ FOLIO_METRICS_TOKEN: 'x'.repeat(15) }, /FOLIO_METRICS_TOKEN must be 16 to 512 visible ASCII characters/],
    [{ FOLIO_METRICS_TOKEN: 'métriques-0123456789' }, /FOLIO_METRICS_TOKEN must be/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ CLICKHOUSE_URL: 'tcp://x' }, /CLICKHOUSE_URL/],
    [{ FOLIO_MODEL: 'gpt-5' }, /not a model id/],
    [{ FOLIO_MODELS: 'openai/gpt-5,llama' }, /FOLIO_MODELS/],
    [{ FOLIO_LEASE: 'forever' }, /FOLIO_LEASE must be a duration/],
    [{ FOLIO_TRUST_PROXY: 'the load balancer' }, /FOLIO_TRUST_PROXY/],
    [{ FOLIO_BRANCH_PREFIX: '-x/' }, /FOLIO_BRANCH_PREFIX "-x\/" starts with "-"/],
    [{ FOLIO_BRANCH_PREFIX: 'a b/' }, /FOLIO_BRANCH_PREFIX/],
    [{ FOLIO_GIT_PROTOCOLS: 'https,ext' }, /FOLIO_GIT_PROTOCOLS may list https, http and ssh, got "ext"/],
    [{ FOLIO_OUTBOUND_ALLOW: '10.0.0.0/8,intranet' }, /FOLIO_OUTBOUND_ALLOW: "intranet" is not an address or a CIDR/],
    [{ FOLIO_HEADERS_TIMEOUT: '2m', FOLIO_REQUEST_TIMEOUT: '1m' }, /FOLIO_HEADERS_TIMEOUT must not be longer than FOLIO_REQUEST_TIMEOUT/],
    [{ FOLIO_SHUTDOWN_TIMEOUT: '0' }, /FOLIO_SHUTDOWN_TIMEOUT must be at least 1 ms/],
    [{ FOLIO_PUBLIC_URL: 'folio.example.com' }, /FOLIO_PUBLIC_URL must be an http\(s\) URL/],
    [{ FOLIO_PUBLIC_URL: 'javascript:alert(1)' }, /FOLIO_PUBLIC_URL/],
    [{ FOLIO_PUBLIC_URL: 'https://user:pw@folio.example.com' }, /without credentials/],
    [{ FOLIO_MODEL_PRICES: 'openai/gpt-5=cheap' }, /FOLIO_MODEL_PRICES has "openai\/gpt-5=cheap"/],
    [{ FOLIO_MODEL_PRICES: 'gpt-5=1:2' }, /not a model id/],
    [{ FOLIO_MODEL_PRICES: 'openai/gpt-5=-1:2' }, /FOLIO_MODEL_PRICES/],
  ])('refuses %j with a clear message', (env, message) => {
    const dir = tempDir();
    expect(() => loadConfig({ FOLIO_DATA_DIR: dir, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ FOLIO_DATA_DIR: dir, ...env })).toThrow(message);
    rmSync(dir, { recursive: true });
  });

  it('reads the security settings, with safe defaults', () => {
    const parent = tempDir();
    const dir = path.join(parent, 'data'); // created by loadConfig
    const defaults = loadConfig({ FOLIO_DATA_DIR: dir });
    expect(defaults.repositories).toEqual({ protocols: ['https'], allowLocal: false, caFile: null });
    expect(defaults.outbound).toEqual({ allow: [] });
    expect(defaults.timeouts).toEqual({ headersMs: 10_000, requestMs: 60_000, idleMs: 60_000, keepAliveMs: 5_000, shutdownMs: 10_000 });
    expect(defaults.streams).toEqual({ perKey: 20, perProject: 100, recheckMs: 2_000 });
    const set = loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_GIT_PROTOCOLS: 'ssh, HTTP', FOLIO_ALLOW_LOCAL_REPOSITORIES: 'yes', FOLIO_OUTBOUND_ALLOW: '10.0.0.0/8, fd00::/8,192.168.1.5' });
    expect(set.repositories).toEqual({ protocols: ['https', 'ssh', 'http'], allowLocal: true, caFile: null });
    expect(set.outbound.allow).toEqual(['10.0.0.0/8', 'fd00::/8', '192.168.1.5']);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    rmSync(parent, { recursive: true });
  });

  it('reads how often live event streams check their access again', () => {
    const dir = tempDir();
    expect(loadConfig({ FOLIO_DATA_DIR: dir }).streams.recheckMs).toBe(2_000);
    expect(loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_STREAM_RECHECK: '500ms' }).streams.recheckMs).toBe(500);
    expect(() => loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_STREAM_RECHECK: '10ms' })).toThrow(/FOLIO_STREAM_RECHECK must be at least 100 ms/);
    rmSync(dir, { recursive: true });
  });

  it('reads the dashboard URL and the model price table', () => {
    const dir = tempDir();
    const c = loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_PUBLIC_URL: 'https://folio.example.com/base/', FOLIO_MODEL_PRICES: 'openai-compatible/qwen3-coder=0:0, anthropic/claude-sonnet-4-5=2.5:12.25' });
    expect(c.publicUrl).toBe('https://folio.example.com/base');
    expect(c.models.prices['openai-compatible/qwen3-coder']).toEqual({ input: 0, output: 0 });
    expect(c.models.prices['anthropic/claude-sonnet-4-5']).toEqual({ input: 2.5, output: 12.25 });
    expect(c.models.prices['openai/gpt-5']).toEqual({ input: 1.25, output: 10 });
    const d = loadConfig({ FOLIO_DATA_DIR: dir });
    expect(d.publicUrl).toBeNull();
    expect(d.models.prices['anthropic/claude-sonnet-4-5']).toEqual({ input: 3, output: 15 });
    rmSync(dir, { recursive: true });
  });

  it('parses durations', () => {
    expect(parseDuration('90d')).toBe(90 * 86_400_000);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('1.5h')).toBeNull();
  });

  it('gives child processes (git) what they need and none of the secrets, nor proxy variables (git uses the egress proxy)', () => {
    const env = childProcessEnv({
      PATH: '/usr/bin',
      HOME: '/root',
      HTTPS_PROXY: 'http://proxy:3128',
      FOLIO_SECRET: 'x'.repeat(20),
      ANTHROPIC_API_KEY: 'sk-ant',
      GITHUB_TOKEN: 'ghp_x',
      DATABASE_URL: 'postgres://u:p@h/db',
      GIT_DIR: '/elsewhere',
      no_proxy: '*',
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/root' });
  });
});
