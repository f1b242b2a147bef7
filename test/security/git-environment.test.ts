// The environment of Folio's own git processes (src/git/run.ts), observed on real git runs: only the
// transports the policy allows (ext:: and other remote helpers never), no system or user git
// configuration, and none of Folio's own variables. This process plays an operator's machine with a
// hostile ~/.gitconfig, a hostile system config and git variables in Folio's environment: hooks, an
// ssh command and config overrides that would write to a log if git honoured them. Controls run plain
// git under the same settings to show each trap is live.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GitError as GitErrorClass, GitWorkspaceOptions } from '../../src/git/git.ts';
import type { RepositoryPolicy } from '../../src/git/repository-url.ts';
import { createBareRepo, gitSync } from '../fixtures/git-server.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-gitenv-'));
/** Every trap appends its name here. */
const LOG = path.join(dir, 'ran.log');
const MARKER = path.join(dir, 'pwned');
const hostileHome = path.join(dir, 'home');
const hooks = path.join(dir, 'hooks');
const systemConfig = path.join(dir, 'system-gitconfig');
const bare = path.join(dir, 'remote', 'docs.git');
const scratch = path.join(dir, 'scratch');
const dataDir = path.join(dir, 'data');

const HOSTILE_CONFIG = `[core]
\thooksPath = ${hooks}
\tsshCommand = echo core.sshCommand >> ${LOG}; false
\tfsmonitor = ${hooks}/fsmonitor
[protocol "ext"]
\tallow = always
`;
/** Folio's environment on that machine: git variables and secrets that must not reach git. */
const FOLIO_ENV = {
  HOME: hostileHome,
  GIT_CONFIG_SYSTEM: systemConfig,
  GIT_CONFIG_PARAMETERS: `'core.hookspath'='${hooks}'`,
  GIT_SSH_COMMAND: `echo GIT_SSH_COMMAND >> ${LOG}; false`,
  GIT_ALLOW_PROTOCOL: 'ext:fd:file:http:https:ssh',
  FOLIO_SECRET: 'canary-folio-secret',
  ANTHROPIC_API_KEY: 'canary-anthropic-key',
  GITHUB_TOKEN: 'canary-github-token',
};
const saved = Object.fromEntries(Object.keys(FOLIO_ENV).map((k) => [k, process.env[k]]));

let gitMod: typeof import('../../src/git/git.ts');
let runMod: typeof import('../../src/git/run.ts');
let poolMod: typeof import('../../src/git/worktree-pool.ts');
let GitError: typeof GitErrorClass;

const ran = () => (existsSync(LOG) ? readFileSync(LOG, 'utf8') : '');

/** Plain git (the controls), with exactly `env` besides PATH. */
function plainGit(args: string[], cwd: string, env: Record<string, string>) {
  return spawnSync('git', args, { cwd, env: { PATH: process.env.PATH!, ...env }, encoding: 'utf8' });
}

function repo(repositoryUrl: string, policy: RepositoryPolicy): { r: InstanceType<typeof gitMod.Repo>; opts: GitWorkspaceOptions } {
  const opts: GitWorkspaceOptions = {
    dataDir,
    repositoryUrl,
    policy,
    outbound: { allow: ['127.0.0.0/8'] },
    pool: new poolMod.WorktreePool({ dataDir, size: 0 }),
    credentials: null,
    author: { name: 'Folio Agent', email: 'agent@folio.invalid' },
  };
  return { r: new gitMod.Repo(opts), opts };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  // Fixtures first, with this machine's own git settings.
  createBareRepo(bare, { 'README.md': '# Docs\n' });
  gitSync(['clone', '--quiet', bare, scratch], dir);
  // A repository's own config is Folio's (it creates every mirror): an alias there shows git's environment.
  gitSync(['config', 'alias.dump-env', '!env'], scratch);
  mkdirSync(hooks);
  for (const hook of ['reference-transaction', 'post-checkout', 'post-commit', 'pre-push', 'post-merge', 'fsmonitor']) {
    writeFileSync(path.join(hooks, hook), `#!/bin/sh\necho ${hook} >> ${LOG}\n`);
    chmodSync(path.join(hooks, hook), 0o755);
  }
  mkdirSync(path.join(hostileHome, '.config', 'git'), { recursive: true });
  writeFileSync(path.join(hostileHome, '.gitconfig'), HOSTILE_CONFIG);
  writeFileSync(path.join(hostileHome, '.config', 'git', 'config'), HOSTILE_CONFIG);
  writeFileSync(systemConfig, HOSTILE_CONFIG);
  // run.ts reads the inherited environment when it loads: load it only now.
  Object.assign(process.env, FOLIO_ENV);
  runMod = await import('../../src/git/run.ts');
  gitMod = await import('../../src/git/git.ts');
  poolMod = await import('../../src/git/worktree-pool.ts');
  GitError = gitMod.GitError;
});
// Each test starts with an empty log (a control fills it).
afterEach(() => rmSync(LOG, { force: true }));
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("the environment of Folio's git processes", () => {
  it('has the transport limit and no-config settings, and none of Folio\'s variables', async () => {
    const env = Object.fromEntries(
      (await runMod.git(['dump-env'], { cwd: scratch })).split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(env).toMatchObject({ GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_ALLOW_PROTOCOL: 'file', GIT_TERMINAL_PROMPT: '0' });
    for (const name of ['GIT_CONFIG_SYSTEM', 'GIT_CONFIG_PARAMETERS', 'GIT_SSH_COMMAND', 'FOLIO_SECRET', 'ANTHROPIC_API_KEY', 'GITHUB_TOKEN']) expect(env, name).not.toHaveProperty(name);
    expect(JSON.stringify(env)).not.toContain('canary');
  });

  it("a job's whole git work (fetch, worktree, commit, push) honours no hostile user config, system config or git variable", async () => {
    const { r } = repo(bare, { protocols: ['https'], allowLocal: true });
    const wt = path.join(dataDir, 'worktrees', 'job_1');
    await r.prepareWorktree(wt, 'folio/job_1', 'main');
    writeFileSync(path.join(wt, 'new.md'), '# New\n');
    expect(await r.commitAll(wt, 'Add a page')).not.toBeNull();
    await r.push(wt, 'folio/job_1');
    await r.fetch();
    await r.removeWorktree(wt, 'folio/job_1');
    expect(plainGit(['log', '--format=%s', 'folio/job_1'], bare, { HOME: dir }).stdout.trim().split('\n')).toEqual(['Add a page', 'Initial docs']);
    // A system config the caller points at is still skipped (GIT_CONFIG_NOSYSTEM).
    await runMod.git(['clone', '--quiet', '--', bare, path.join(dir, 'clone-folio')], { cwd: dir, env: { GIT_CONFIG_SYSTEM: systemConfig } });
    expect(ran()).toBe('');

    // Controls: plain git with that HOME, and with that system config, runs the hooks.
    const clone = path.join(dir, 'clone-home');
    expect(plainGit(['clone', '--quiet', bare, clone], dir, { HOME: hostileHome }).status).toBe(0);
    expect(plainGit(['-c', 'user.name=a', '-c', 'user.email=b@c', 'commit', '--quiet', '--allow-empty', '-m', 'x'], clone, { HOME: hostileHome }).status).toBe(0);
    expect(ran()).toMatch(/reference-transaction[\s\S]*post-checkout[\s\S]*post-commit/);
    rmSync(LOG);
    expect(plainGit(['clone', '--quiet', bare, path.join(dir, 'clone-system')], dir, { HOME: dir, GIT_CONFIG_SYSTEM: systemConfig }).status).toBe(0);
    expect(ran()).toMatch(/reference-transaction[\s\S]*post-checkout/);
  });

  it('an ssh remote runs plain ssh: neither core.sshCommand from ~/.gitconfig nor GIT_SSH_COMMAND from Folio\'s environment', async () => {
    const url = `ssh://git@127.0.0.1:${await closedPort()}/acme/docs.git`;
    const { r } = repo(url, { protocols: ['ssh'], allowLocal: false });
    const err = await r.fetch().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitErrorClass).code).toBe('repository_unreachable');
    expect(ran()).toBe('');
    // Control: plain git with that HOME runs the configured command instead of ssh.
    plainGit(['ls-remote', '--', url], dir, { HOME: hostileHome, GIT_ALLOW_PROTOCOL: 'ssh' });
    expect(ran()).toContain('core.sshCommand');
  });
});

describe('transports', () => {
  const widest: RepositoryPolicy = { protocols: ['https', 'http', 'ssh'], allowLocal: true };

  it('git refuses ext:: and other remote helpers on a fetch, even with every transport allowed and a URL past the check', async () => {
    const { r, opts } = repo(bare, widest);
    for (const url of [`ext::sh -c touch% ${MARKER}`, 'fd::17', `testhelper::${MARKER}`]) {
      // The constructor checked the real URL; a value changed afterwards stands for one that got past the check.
      opts.repositoryUrl = url;
      const err = await r.fetch().then(() => null, (e: unknown) => e);
      expect(err, url).toBeInstanceOf(GitError);
      expect(err, url).toMatchObject({ code: 'repository_protocol_refused', message: "git refused the repository's transport on this server." });
      expect((err as GitErrorClass).detail, url).toMatch(/transport '(ext|fd|testhelper)' not allowed/);
    }
    expect(existsSync(MARKER)).toBe(false);
    expect(ran()).toBe('');
  });

  it('git talks only over the transports the policy lists, and over none outside fetch and push', async () => {
    const hits: string[] = [];
    const server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      // https only: an http URL past the check is refused by git before it connects.
      const { r, opts } = repo(`https://127.0.0.1:${port}/acme/docs.git`, { protocols: ['https'], allowLocal: false });
      opts.repositoryUrl = `http://127.0.0.1:${port}/acme/docs.git`;
      await expect(r.fetch()).rejects.toMatchObject({ code: 'repository_protocol_refused' });
      // Any other git command: local repositories only.
      for (const url of [`http://127.0.0.1:${port}/acme/docs.git`, `ext::sh -c touch% ${MARKER}`]) {
        const err = await runMod.git(['ls-remote', '--', url], { cwd: scratch }).then(() => null, (e: unknown) => e);
        expect(err, url).toBeInstanceOf(GitError);
        expect((err as GitErrorClass).detail, url).toMatch(/transport '(http|ext)' not allowed/);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(hits).toEqual([]);
    expect(existsSync(MARKER)).toBe(false);
  });
});
