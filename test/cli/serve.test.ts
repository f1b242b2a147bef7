// What `folio serve` and `folio worker` say once started: the dashboard (and, while no owner exists,
// the setup link with its token), the model provider, where the data lives; never another secret.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, startProcess } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { loadConfig } from '../../src/config.ts';
import { startupLines, withoutCredentials } from '../../src/cli/next-steps.ts';

const dirs: string[] = [];
const dataDir = () => {
  const dir = tempDir('folio-serve-');
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The messages of the JSON log lines in `output`, from the first one equal to `from`. */
function messagesFrom(output: string, from: string): string[] {
  const msgs = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).msg as string);
  return msgs.slice(msgs.indexOf(from));
}

async function serveOnce(env: Record<string, string>): Promise<{ url: string; messages: string[]; output: string }> {
  const child = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], { PORT: '0', LOG_LEVEL: 'info', FOLIO_ACCESS_LOG: 'false', ...env });
  try {
    for (let i = 0; i < 100 && !child.output().includes('"msg":"Data: '); i++) await new Promise((r) => setTimeout(r, 50));
    return { url: child.url, messages: messagesFrom(child.output(), 'Folio is listening'), output: child.output() };
  } finally {
    child.proc.kill('SIGTERM');
    await child.exited;
  }
}

describe('folio serve', () => {
  it('says where the dashboard is, the setup link while no owner exists, the model and the data directory', async () => {
    const dir = dataDir();
    const first = await serveOnce({ FOLIO_DATA_DIR: dir, ANTHROPIC_API_KEY: 'sk-ant-not-printed', OPENAI_API_KEY: '' });
    const token = loadConfig({ FOLIO_DATA_DIR: dir }).setupToken;
    expect(first.messages).toEqual([
      'Folio is listening',
      `Dashboard: ${first.url}/`,
      `Create the owner account: ${first.url}/setup#token=${token} (the link holds the setup token: keep it private until the owner exists)`,
      'Model: anthropic/claude-sonnet-4-5 (ANTHROPIC_API_KEY is set)',
      `Data: ${dir} (state in SQLite, analytics in DuckDB, repository mirrors)`,
    ]);
    expect(first.output).not.toContain('sk-ant-not-printed');

    // Once the owner exists, only the address, and the token nowhere.
    const owner = await runCli(['user', 'create', '--email', 'lead@example.com'], { FOLIO_DATA_DIR: dir });
    expect(owner.code, owner.stderr).toBe(0);
    const again = await serveOnce({ FOLIO_DATA_DIR: dir, ANTHROPIC_API_KEY: 'x' });
    expect(again.messages[1]).toBe(`Dashboard: ${again.url}/`);
    expect(again.messages[2]).toMatch(/^Model: /);
    expect(again.output).not.toContain(token);
  });

  it('on a terminal, also prints the next steps as plain lines on stderr', async () => {
    const dir = dataDir();
    // util-linux `script` runs serve on a pseudo-terminal, as a user's shell would. It is stopped once
    // the last line is out (a loaded machine may take long to start); `timeout` is only a backstop.
    const out = await new Promise<string>((resolve, reject) => {
      const cmd = `env FOLIO_DATA_DIR=${dir} PORT=0 ANTHROPIC_API_KEY= OPENAI_API_KEY= OPENAI_COMPATIBLE_BASE_URL= timeout 50 ${process.execPath} bin/folio.mjs serve --no-workers`;
      const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: ROOT, detached: true, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        if (/\n {2}Data: [^\n]*\n/.test(text)) process.kill(-child.pid!, 'SIGTERM');
      });
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    const plain = out.split(/\r?\n/).filter((l) => l.startsWith('  '));
    const token = loadConfig({ FOLIO_DATA_DIR: dir }).setupToken;
    expect(plain[0]).toMatch(/^ {2}Dashboard: http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(plain[1]).toMatch(/^ {2}Create the owner account: http:\/\/127\.0\.0\.1:\d+\/setup#token=(\S+) \(the link holds the setup token/);
    expect(plain[1]).toContain(`#token=${token} `);
    expect(plain[2]).toMatch(/^ {2}! No model provider is configured: set ANTHROPIC_API_KEY/);
    expect(plain[3]).toBe(`  Data: ${dir} (state in SQLite, analytics in DuckDB, repository mirrors)`);
  }, 60_000);

  it('says when no model provider is configured, and which variable sets one', async () => {
    const dir = dataDir();
    const none = await serveOnce({ FOLIO_DATA_DIR: dir, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OPENAI_COMPATIBLE_BASE_URL: '' });
    const line = none.output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((e) => /^No model provider/.test(e.msg));
    expect(line.msg).toBe(
      'No model provider is configured: set ANTHROPIC_API_KEY for anthropic/claude-sonnet-4-5, or FOLIO_MODEL and OPENAI_API_KEY or OPENAI_COMPATIBLE_BASE_URL. Jobs are refused until then.',
    );
    expect(line.level).toBe(40);
    expect(none.messages).toHaveLength(5);
  });
});

describe('folio worker', () => {
  it('says only what applies to a worker: the model and the data, no dashboard', async () => {
    const dir = dataDir();
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/folio.mjs'), 'worker'], {
      env: { ...process.env, FOLIO_DATA_DIR: dir, LOG_LEVEL: 'info', OPENAI_API_KEY: 'sk-not-printed', ANTHROPIC_API_KEY: '', FOLIO_MODEL: 'openai/gpt-5' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.on('exit', r));
    try {
      for (let i = 0; i < 300 && !out.includes('"msg":"Data: '); i++) await new Promise((r) => setTimeout(r, 50));
      expect(messagesFrom(out, 'Folio workers running')).toEqual([
        'Folio workers running',
        'Model: openai/gpt-5 (OPENAI_API_KEY is set)',
        `Data: ${dir} (state in SQLite, repository mirrors)`,
      ]);
      expect(out).not.toContain('sk-not-printed');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('startup lines', () => {
  it('name the stores of a scaled setup without their credentials', () => {
    const dir = dataDir();
    const config = loadConfig({
      FOLIO_DATA_DIR: dir,
      FOLIO_SECRET: 'a-secret-0123456789abcdef',
      DATABASE_URL: 'postgres://folio:pg-password@db.internal:5432/folio?sslmode=require&password=again',
      CLICKHOUSE_URL: 'https://analytics:ch-password@ch.internal:8443/?database=folio',
      OPENAI_COMPATIBLE_BASE_URL: 'http://user:llm-password@gpu.internal:8000/v1',
      FOLIO_MODEL: 'openai-compatible/qwen3-coder',
      FOLIO_PUBLIC_URL: 'https://folio.example.com',
    });
    const lines = startupLines(config, { listenUrl: 'http://127.0.0.1:8080', setupRequired: false });
    expect(lines.map((l) => l.msg)).toEqual([
      'Dashboard: https://folio.example.com/',
      'Model: openai-compatible/qwen3-coder (OPENAI_COMPATIBLE_BASE_URL is set: http://gpu.internal:8000/v1)',
      `Data: ${dir} (repository mirrors); state in PostgreSQL at postgres://db.internal:5432/folio; analytics in ClickHouse at https://ch.internal:8443`,
    ]);
    const text = JSON.stringify(lines);
    for (const secret of ['pg-password', 'again', 'ch-password', 'llm-password', 'a-secret', config.setupToken]) expect(text).not.toContain(secret);
    // While setup is required: the public address's setup page, with the token (URL-encoded) in the fragment.
    const custom = loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_SECRET: 'a-secret-0123456789abcdef', FOLIO_SETUP_TOKEN: 'chosen+token/with=marks', FOLIO_PUBLIC_URL: 'https://folio.example.com' });
    const setup = startupLines(custom, { listenUrl: 'http://127.0.0.1:8080', setupRequired: true });
    expect(setup[1]).toEqual({
      level: 'info',
      msg: 'Create the owner account: https://folio.example.com/setup#token=chosen%2Btoken%2Fwith%3Dmarks (the link holds the setup token: keep it private until the owner exists)',
      fields: { setupUrl: 'https://folio.example.com/setup#token=chosen%2Btoken%2Fwith%3Dmarks' },
    });
    expect(withoutCredentials('not a url')).toBe('(not a URL)');
  });

  it('say when the default model needs a variable that another provider has not', () => {
    const config = loadConfig({ FOLIO_DATA_DIR: dataDir(), FOLIO_SECRET: 'a-secret-0123456789abcdef', OPENAI_API_KEY: 'sk-x' });
    const model = startupLines(config, {}).find((l) => l.msg.startsWith('Model'))!;
    expect(model).toMatchObject({
      level: 'warn',
      msg: 'Model: anthropic/claude-sonnet-4-5 needs ANTHROPIC_API_KEY, which is not set (OPENAI_API_KEY is, for openai/… models: set FOLIO_MODEL). Jobs on it are refused until then.',
    });
  });
});
