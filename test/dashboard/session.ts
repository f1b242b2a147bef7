// A cookie-keeping HTTP client for dashboard tests: signs in like the browser does.
import type { TestServer } from '../helpers/server.ts';

export interface Res {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export class Browser {
  cookie: string | null = null;
  csrf: string | null = null;
  readonly base: string;
  constructor(server: { url: string }) {
    this.base = server.url;
  }

  async req(method: string, urlPath: string, o: { body?: unknown; headers?: Record<string, string>; csrf?: boolean } = {}): Promise<Res> {
    const headers: Record<string, string> = { ...o.headers };
    if (this.cookie) headers.cookie = this.cookie;
    if (o.csrf !== false && this.csrf && method !== 'GET') headers['x-csrf-token'] ??= this.csrf;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.base + urlPath, { method, headers, body, redirect: 'manual' });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      const value = /^folio_session=([^;]*)/.exec(setCookie)?.[1] ?? '';
      this.cookie = value ? `folio_session=${value}` : null;
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {}
    if (parsed && typeof parsed === 'object' && 'csrfToken' in parsed) this.csrf = (parsed as { csrfToken: string }).csrfToken;
    return { status: res.status, headers: res.headers, body: parsed, text };
  }
}

export const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };

/** Runs first-run setup, with the server's setup token as its printed link has it, and returns a signed-in browser. */
export async function setUp(server: TestServer): Promise<Browser> {
  const b = new Browser(server);
  const res = await b.req('POST', '/api/setup', { body: { ...OWNER, setupToken: server.services.config.setupToken } });
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${res.text}`);
  return b;
}
