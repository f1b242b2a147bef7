// git's own HTTP traffic is under the outbound address policy (src/net/egress-proxy.ts): every
// connection git makes goes through Folio's local proxy, which checks the address it actually
// connects to, and git follows no redirect. A repository host that redirects to loopback, private or
// metadata addresses, over http or https, reaches none of them and hands them no token; the job
// fails with a clear code. A name that resolves to a public address once and to an internal one the
// next time cannot slip past either.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitError, Repo } from '../../src/git/git.ts';
import { WorktreePool } from '../../src/git/worktree-pool.ts';
import { EgressProxy } from '../../src/net/egress-proxy.ts';
import type { Resolve } from '../../src/net/address-policy.ts';
import { startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';

const TOKEN = 'ghp_egress_token_0123456789';
const BASIC = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
/** Only the repository host's address is allowed; loopback 127.0.0.1 is not. */
const OUTBOUND = { allow: ['127.0.0.2/32'] };

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'folio-egress-'));
let pool: WorktreePool;
let tls: { key: string; cert: string; caFile: string };

/** Every request a would-be target receives, with its Authorization header. */
const hits: { url: string; authorization?: string }[] = [];
let target: http.Server;
let targetPort: number;

function resolver(table: Record<string, string[] | (() => string[])>): Resolve {
  return async (host) => {
    const entry = table[host];
    if (!entry) throw new Error(`ENOTFOUND ${host}`);
    return (typeof entry === 'function' ? entry() : entry).map((address) => ({ address, family: 4 }));
  };
}
const RESOLVE = resolver({ 'intranet.test': ['10.0.0.7'], 'metadata.test': ['169.254.169.254'] });

/** A repository host on 127.0.0.2 that answers every request with `status` to `location`. */
async function redirector(status: number, location: string, secure: boolean): Promise<{ origin: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(status, { location });
    res.end();
  };
  const server = secure ? https.createServer({ key: tls.key, cert: tls.cert }, handle) : http.createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  const port = (server.address() as net.AddressInfo).port;
  return { origin: `${secure ? 'https' : 'http'}://127.0.0.2:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

function repo(url: string, resolve: Resolve = RESOLVE): Repo {
  return new Repo({
    dataDir,
    repositoryUrl: url,
    policy: { protocols: ['https', 'http'], allowLocal: false, caFile: tls.caFile },
    outbound: OUTBOUND,
    resolve,
    pool,
    credentials: { token: TOKEN, username: 'x-access-token' },
    author: { name: 'Folio Agent', email: 'agent@folio.invalid' },
  });
}

beforeAll(async () => {
  pool = new WorktreePool({ dataDir, size: 0 });
  // A self-signed certificate for 127.0.0.2 (test/fixtures/tls, valid for a century), trusted by git
  // through FOLIO_GIT_CA_FILE's setting.
  const dir = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
  tls = { key: readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'), caFile: path.join(dir, 'cert.pem') };
  target = http.createServer((req, res) => {
    hits.push({ url: req.url ?? '', authorization: req.headers.authorization });
    res.end('# service: git-upload-pack\n');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  targetPort = (target.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => target.close(r));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a repository host that redirects', () => {
  const targets = () => [
    ['loopback', `http://127.0.0.1:${targetPort}/acme/docs.git/info/refs?service=git-upload-pack`],
    ['private', 'http://intranet.test/acme/docs.git/info/refs?service=git-upload-pack'],
    ['metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['metadata by name', 'https://metadata.test/latest/'],
  ];

  for (const secure of [false, true]) {
    for (const status of [301, 302, 307, 308]) {
      it(`${secure ? 'https' : 'http'} ${status}: git follows it nowhere, sends no token there, and fails with repository_redirected`, async () => {
        for (const [, location] of targets()) {
          const host = await redirector(status, location, secure);
          try {
            const err = await repo(`${host.origin}/acme/docs.git`).fetch().catch((e: unknown) => e);
            expect(err).toBeInstanceOf(GitError);
            expect((err as GitError).code).toBe('repository_redirected');
            expect((err as GitError).message).toMatch(/answered with a redirect, which Folio does not follow/);
            expect(host.seen.length).toBeGreaterThan(0); // git did talk to the allowed host
          } finally {
            await host.close();
          }
        }
        expect(hits).toEqual([]);
      });
    }
  }
});

describe('the egress proxy', () => {
  it('is where git connects: an internal address git reaches by its own lookup is refused with a clear code', async () => {
    // The early check passes (the name is public the first time it is looked up); git's connection,
    // through the proxy, looks again and gets loopback: the proxy refuses and nothing reaches it.
    let lookups = 0;
    const rebinding = resolver({ 'docs.rebind.test': () => (++lookups === 1 ? ['127.0.0.2'] : ['127.0.0.1']) });
    const err = await repo(`http://docs.rebind.test:${targetPort}/acme/docs.git`, rebinding).fetch().catch((e: unknown) => e);
    expect(lookups).toBeGreaterThanOrEqual(2);
    expect((err as GitError).code).toBe('repository_address_refused');
    expect((err as GitError).message).toMatch(/^The repository's host: docs\.rebind\.test \(127\.0\.0\.1\) is a loopback address/);
    expect(hits).toEqual([]);
  });

  it('still lets git fetch from an allowed host, with the token, through it', async () => {
    const host: CodeHostServer = await startCodeHost({ token: TOKEN, host: '127.0.0.2' });
    try {
      const url = host.createRepo('acme/ok', { 'README.md': '# Docs\n' });
      await repo(url).fetch();
      expect(host.gitAuthHeaders).toContain(`Basic ${BASIC}`);
    } finally {
      await host.close();
    }
  });

  it('refuses CONNECT to a refused address without connecting, and clients without a session credential', async () => {
    const proxy = await EgressProxy.start(OUTBOUND, RESOLVE);
    const session = proxy.session();
    const { port } = new URL(session.url);
    const ask = (head: string) =>
      new Promise<string>((resolve) => {
        const s = net.connect(Number(port), '127.0.0.1', () => s.write(head));
        let got = '';
        s.on('data', (d) => (got += d.toString('latin1')));
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        setTimeout(() => s.destroy(), 2000);
      });
    const auth = `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(new URL(session.url).username)}:${decodeURIComponent(new URL(session.url).password)}`).toString('base64')}\r\n`;
    try {
      expect(await ask(`CONNECT 127.0.0.1:${targetPort} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 403/);
      expect(await ask(`CONNECT intranet.test:443 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 403/);
      expect(await ask(`GET http://127.0.0.1:${targetPort}/ HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Connection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403/);
      expect(session.refused).toHaveLength(3);
      // Without the credential (or with an ended session): 407, even for an allowed address.
      expect(await ask(`CONNECT 127.0.0.2:${targetPort} HTTP/1.1\r\nHost: x\r\n\r\n`)).toMatch(/^HTTP\/1\.1 407/);
      session.end();
      expect(await ask(`CONNECT 127.0.0.2:${targetPort} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 407/);
      expect(hits).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
