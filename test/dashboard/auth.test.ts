// First-run setup, sign-in, sessions, CSRF, logout and the sign-in rate limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Browser, OWNER } from './session.ts';
import type { UsersDatabase } from '../../src/store/users-schema.ts';

let server: TestServer;
beforeAll(async () => {
  // Behind a proxy (the Secure-cookie test sends X-Forwarded-Proto).
  server = await startTestServer({ workers: 0, env: { FOLIO_TRUST_PROXY: 'true' } });
});
afterAll(async () => {
  await server?.close();
});

const expectError = (res: { status: number; body: any }, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.body.code).toBe(code);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error.length).toBeGreaterThan(10);
};

describe('first-run setup', () => {
  const token = () => server.services.config.setupToken;
  const noUser = async () => expect(await server.services.users.setupRequired()).toBe(true);

  it('reports that setup, and so the setup token, is required while there is no user', async () => {
    const res = await new Browser(server).req('GET', '/api/setup');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ setupRequired: true, tokenRequired: true });
  });

  it('refuses a stranger without the setup token, or with a wrong one, whatever else is sent: 403 invalid_setup_token, creating nothing', async () => {
    const b = new Browser(server);
    const wrong = [undefined, '', 'x', token().slice(0, -1), `${token()} `, token().toUpperCase(), 'a'.repeat(512)];
    for (const setupToken of wrong) {
      const res = await b.req('POST', '/api/setup', { body: { ...OWNER, setupToken } });
      expectError(res, 403, 'invalid_setup_token');
      expect(res.body.error).toMatch(setupToken ? /^The setup token is not right/ : /^Creating the owner needs the setup token: open the setup link `folio serve` printed/);
      expect(res.text).not.toContain(token());
    }
    // Bad credentials are not even looked at without the token: a stranger learns nothing of the rules.
    expectError(await b.req('POST', '/api/setup', { body: { email: 'not-an-email', password: 'short' } }), 403, 'invalid_setup_token');
    // A token longer than any Folio makes is refused by the schema, without repeating it.
    const long = await b.req('POST', '/api/setup', { body: { ...OWNER, setupToken: 'y'.repeat(513) } });
    expectError(long, 400, 'invalid_request');
    expect(long.text).not.toContain('yyyy');
    expectError(await b.req('POST', '/api/setup', { body: { ...OWNER, setupToken: 42 } }), 400, 'invalid_request');
    expect(b.cookie).toBeNull();
    await noUser();
  });

  it('refuses bad input with 4xx and a clear error, creating nothing', async () => {
    const b = new Browser(server);
    const setupToken = token();
    expectError(await b.req('POST', '/api/setup', { body: { email: 'not-an-email', password: 'long enough password', setupToken } }), 400, 'invalid_user');
    expectError(await b.req('POST', '/api/setup', { body: { email: 'a@example.com', password: 'short', setupToken } }), 400, 'invalid_user');
    expectError(await b.req('POST', '/api/setup', { body: { email: 'a@example.com', setupToken } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/setup', { body: { ...OWNER, setupToken, role: 'owner' } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/setup', { body: '{"email":' }), 400, 'invalid_json');
    expectError(await b.req('POST', '/api/setup', { body: 'email=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    expectError(await b.req('POST', '/api/setup', { body: { ...OWNER, setupToken }, headers: { origin: 'https://evil.example' } }), 403, 'cross_origin_request');
    expect(b.cookie).toBeNull();
    expect((await b.req('GET', '/api/setup')).body).toEqual({ setupRequired: true, tokenRequired: true });
  });

  it('creates the owner with the setup token, signs them in with a hardened cookie, and only once', async () => {
    const b = new Browser(server);
    const res = await b.req('POST', '/api/setup', { body: { ...OWNER, email: '  Owner@Example.com ', setupToken: token() } });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ email: OWNER.email, role: 'owner' });
    expect(res.body.csrfToken).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(res.text).not.toContain(token());
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^folio_session=[A-Za-z0-9_-]{40,};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain('Secure'); // plain HTTP here

    const session = await b.req('GET', '/api/session');
    expect(session.status).toBe(200);
    expect(session.body.user.email).toBe(OWNER.email);
    expect(session.body.csrfToken).toBe(res.body.csrfToken);
    expect(session.body.models.allowed).toContain(session.body.models.default);

    // Once the owner exists the token opens nothing, and a request without it is told so, not asked for it.
    const second = { email: 'second@example.com', password: 'another long password' };
    expectError(await new Browser(server).req('POST', '/api/setup', { body: { ...second, setupToken: token() } }), 409, 'already_set_up');
    expectError(await new Browser(server).req('POST', '/api/setup', { body: second }), 409, 'already_set_up');
    expectError(await new Browser(server).req('POST', '/api/setup', { body: { ...second, setupToken: 'wrong token' } }), 409, 'already_set_up');
    expect((await new Browser(server).req('GET', '/api/setup')).body).toEqual({ setupRequired: false, tokenRequired: false });
  });

  it('stores only a scrypt hash of the password', async () => {
    const rows = await server.services.store.db.withTables<{ users: { email: string; password_hash: string } }>().selectFrom('users').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0].password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(rows[0].password_hash).not.toContain(OWNER.password);
  });
});

describe('sign-in and sessions', () => {
  it('signs in with the right password and refuses a wrong one', async () => {
    const b = new Browser(server);
    expectError(await b.req('GET', '/api/session'), 401, 'not_signed_in');
    expectError(await b.req('POST', '/api/login', { body: { email: OWNER.email, password: 'wrong password!' } }), 401, 'invalid_credentials');
    expectError(await b.req('POST', '/api/login', { body: { email: 'nobody@example.com', password: 'wrong password!' } }), 401, 'invalid_credentials');
    expectError(await b.req('POST', '/api/login', { body: { email: OWNER.email } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/login', { body: OWNER, headers: { origin: 'http://attacker.test' } }), 403, 'cross_origin_request');
    const ok = await b.req('POST', '/api/login', { body: { email: 'OWNER@example.com', password: OWNER.password } });
    expect(ok.status).toBe(200);
    expect(ok.body.user.email).toBe(OWNER.email);
    expect((await b.req('GET', '/api/session')).status).toBe(200);
  });

  it('replaces the browser\'s session on sign-in', async () => {
    const b = new Browser(server);
    await b.req('POST', '/api/login', { body: OWNER });
    const first = b.cookie;
    await b.req('POST', '/api/login', { body: OWNER });
    expect(b.cookie).not.toBe(first);
    expect((await b.req('GET', '/api/session')).status).toBe(200);
    const old = new Browser(server);
    old.cookie = first;
    expectError(await old.req('GET', '/api/session'), 401, 'not_signed_in');
  });

  it('accepts a same-origin Origin header on sign-in', async () => {
    const b = new Browser(server);
    const res = await b.req('POST', '/api/login', { body: OWNER, headers: { origin: server.url } });
    expect(res.status).toBe(200);
  });

  it('marks the cookie Secure when the request came over HTTPS through a proxy', async () => {
    const res = await new Browser(server).req('POST', '/api/login', { body: OWNER, headers: { 'x-forwarded-proto': 'https' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toContain('Secure');
  });

  it('ignores unknown or tampered session cookies', async () => {
    const b = new Browser(server);
    b.cookie = 'folio_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    expectError(await b.req('GET', '/api/session'), 401, 'not_signed_in');
    expectError(await b.req('GET', '/api/projects'), 401, 'not_signed_in');
    b.cookie = 'folio_session=../../etc';
    expectError(await b.req('GET', '/api/session'), 401, 'not_signed_in');
  });

  it('requires the CSRF token on every state change', async () => {
    const b = new Browser(server);
    await b.req('POST', '/api/login', { body: OWNER });
    const body = { name: 'Docs', repositoryUrl: 'https://github.com/acme/docs' };
    expectError(await b.req('POST', '/api/projects', { body, csrf: false }), 403, 'csrf_token_missing');
    expectError(await b.req('POST', '/api/projects', { body, headers: { 'x-csrf-token': 'x'.repeat(43) } }), 403, 'csrf_token_invalid');
    // Another session's token does not work either.
    const other = new Browser(server);
    await other.req('POST', '/api/login', { body: OWNER });
    expectError(await b.req('POST', '/api/projects', { body, headers: { 'x-csrf-token': other.csrf! } }), 403, 'csrf_token_invalid');
    expect((await b.req('GET', '/api/projects')).body.projects).toEqual([]);
    expect((await b.req('POST', '/api/projects', { body })).status).toBe(201);
  });

  it('logs out: needs CSRF, clears the cookie, and the old cookie stops working', async () => {
    const b = new Browser(server);
    await b.req('POST', '/api/login', { body: OWNER });
    const oldCookie = b.cookie;
    expectError(await b.req('POST', '/api/logout', { csrf: false }), 403, 'csrf_token_missing');
    const res = await b.req('POST', '/api/logout');
    expect(res.status).toBe(204);
    expect(res.headers.get('set-cookie')).toMatch(/^folio_session=;.*Max-Age=0/);
    const replay = new Browser(server);
    replay.cookie = oldCookie;
    expectError(await replay.req('GET', '/api/session'), 401, 'not_signed_in');
    expectError(await replay.req('POST', '/api/logout'), 401, 'not_signed_in');
  });
});

describe('session lifetime', () => {
  it('refuses an expired session and slides the expiry of a used one', async () => {
    const db = server.services.store.db.withTables<UsersDatabase>();
    const b = new Browser(server);
    await b.req('POST', '/api/login', { body: OWNER });
    const id = (await db.selectFrom('sessions').select('id').orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow()).id;

    // Seen more than a minute ago: a request extends the session to a full lifetime from now.
    await db.updateTable('sessions').set({ last_seen_at: Date.now() - 120_000, expires_at: Date.now() + 60_000 }).where('id', '=', id).execute();
    expect((await b.req('GET', '/api/session')).status).toBe(200);
    const slid = await db.selectFrom('sessions').select('expires_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(Number(slid.expires_at)).toBeGreaterThan(Date.now() + 6 * 86_400_000);

    await db.updateTable('sessions').set({ expires_at: Date.now() - 1 }).where('id', '=', id).execute();
    expectError(await b.req('GET', '/api/session'), 401, 'not_signed_in');
    expectError(await b.req('GET', '/api/projects'), 401, 'not_signed_in');
  });
});

describe('sign-in rate limit', () => {
  it('locks an email out after 5 failures, even with the right password, with Retry-After', async () => {
    const email = 'victim@example.com';
    const b = new Browser(server);
    for (let i = 0; i < 5; i++) {
      expectError(await b.req('POST', '/api/login', { body: { email, password: `guess number ${i}` } }), 401, 'invalid_credentials');
    }
    const limited = await b.req('POST', '/api/login', { body: { email, password: 'guess number 6' } });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    // Another email is unaffected.
    expect((await b.req('POST', '/api/login', { body: OWNER })).status).toBe(200);
  });

  it('a success clears the email\'s earlier failures', async () => {
    const b = new Browser(server);
    for (let i = 0; i < 4; i++) await b.req('POST', '/api/login', { body: { email: OWNER.email, password: `nope nope ${i}` } });
    expect((await b.req('POST', '/api/login', { body: OWNER })).status).toBe(200);
    for (let i = 0; i < 4; i++) await b.req('POST', '/api/login', { body: { email: OWNER.email, password: `nope nope ${i}` } });
    expect((await b.req('POST', '/api/login', { body: OWNER })).status).toBe(200);
  });
});
