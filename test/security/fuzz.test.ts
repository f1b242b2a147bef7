// Property-based fuzzing of every operation: each route of the app (the public API of /openapi.json
// and the dashboard's hidden /api routes alike) gets requests built from its own schema with hostile
// values in every place (path, query, body, media type, credentials). Whatever arrives, the answer
// is never a 5xx, and every 4xx is the documented `{error, code}` body. A fixed seed and a bounded
// number of runs per operation keep CI repeatable (FOLIO_FUZZ_SEED, FOLIO_FUZZ_RUNS change them).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogRoute } from '../../src/http/app.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler } from '../helpers/handlers.ts';
import { setUp, type Browser } from '../dashboard/session.ts';
import { FUZZ_SEED as SEED } from '../helpers/fuzz.ts';

const RUNS = Number(process.env.FOLIO_FUZZ_RUNS ?? 25);

type Schema = Record<string, any>;

/** Strings that have broken servers: control characters, NUL, huge, unicode, traversal, injection, numbers in disguise. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\n\r\t',
    '../../etc/passwd',
    '%00',
    '%ZZ',
    '😀'.repeat(50),
    'a'.repeat(5000),
    '-1',
    '1e309',
    'Infinity',
    'NaN',
    '9007199254740993',
    '0x7fffffff',
    'null',
    'true',
    '[]',
    '{}',
    "' OR 1=1 --",
    '$(touch /tmp/x)',
    '`id`',
    '--upload-pack=x',
    'ext::sh -c x',
    'http://169.254.169.254/',
    '<script>alert(1)</script>',
    '2025-13-45',
    '2025-01-01T25:61:61Z',
    '+275760-09-13',
  ),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53 + 1, Number.MAX_VALUE, -Number.MAX_VALUE, 1e309, -1e309),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });

/** A value for `schema`: mostly shaped like it (so requests get past validation), often hostile. */
function valueFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return anyJson;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((s: Schema) => valueFor(s, depth + 1)));
  if ('const' in schema) return fc.oneof(fc.constant(schema.const), hostileString);
  if (schema.enum) return fc.oneof(fc.constantFrom(...schema.enum), hostileString);
  switch (schema.type) {
    case 'string':
      return fc.oneof(
        { weight: 3, arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.max(schema.minLength ?? 0, Math.min(schema.maxLength ?? 60, 60)) }) },
        { weight: 2, arbitrary: hostileString },
        { weight: 1, arbitrary: hostileNumber },
      );
    case 'integer':
    case 'number': {
      const lo = schema.minimum ?? -1000;
      const hi = schema.maximum ?? 1000;
      return fc.oneof(fc.integer({ min: Math.max(lo, -1e6), max: Math.min(hi, 1e6) }), hostileNumber, hostileString);
    }
    case 'boolean':
      return fc.oneof(fc.boolean(), hostileString, hostileNumber);
    case 'array':
      return fc.oneof(fc.array(valueFor(schema.items, depth + 1), { maxLength: 4 }), anyJson);
    case 'null':
      return fc.oneof(fc.constant(null), hostileString);
    case 'object': {
      const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      const fields = Object.fromEntries(props.map(([k, s]) => [k, valueFor(s, depth + 1)]));
      const complete = fc.record(fields, { requiredKeys: (schema.required as string[] | undefined) ?? [] });
      const partial = fc.record(fields, { requiredKeys: [] });
      const extra = fc.dictionary(fc.string({ maxLength: 10 }), anyJson, { maxKeys: 2 });
      return fc.oneof(
        { weight: 4, arbitrary: complete },
        { weight: 2, arbitrary: partial },
        { weight: 1, arbitrary: fc.tuple(complete, extra).map(([a, b]) => ({ ...b, ...a })) },
        { weight: 1, arbitrary: anyJson },
      );
    }
    default:
      return anyJson;
  }
}

/** Query values arrive as text: numbers and booleans are sent as their text, objects as JSON. */
const asQueryText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');

interface Target {
  route: CatalogRoute;
  /** Real ids to put in path parameters most of the time, so requests reach the handlers. */
  ids: Record<string, string>;
}

let server: TestServer;
let browser: Browser;
let writeKey: string;
let readKey: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer({
    jobHandler: new ScriptedHandler(),
    env: { FOLIO_RATE_LIMIT_CREATE: '0', FOLIO_RATE_LIMIT_FOLLOW_UP: '0', FOLIO_RATE_LIMIT_ANALYTICS: '0', FOLIO_RATE_LIMIT_COLLECT: '0' },
  });
  browser = await setUp(server);
  ids.projectId = await server.createProject({ siteOrigins: ['https://docs.example.com'] });
  writeKey = await server.createKey(ids.projectId);
  readKey = await server.createKey(ids.projectId, 'read');
  ids.id = (await server.api('POST', `/v2/agent/${ids.projectId}/job`, { key: writeKey, body: { prompt: 'seed' } })).body.id;
  ids.keyId = (await server.services.keys.store.create({ projectId: ids.projectId, name: 'sacrificial' })).row.id;
  ids.deliveryId = 'whd_unknown';
});
afterAll(() => server.close());

function assertWellFormed(where: string, res: { status: number; text: string; headers: Headers }) {
  expect(res.status, `${where} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status >= 400 && (res.headers.get('content-type') ?? '').includes('json')) {
    const body = JSON.parse(res.text);
    expect(typeof body.error, `${where}: ${res.text}`).toBe('string');
    expect(typeof body.code, `${where}: ${res.text}`).toBe('string');
  }
}

async function send(target: Target, parts: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown; auth: string; type: string }) {
  const { route } = target;
  const url = route.url.replace(/:([A-Za-z]+)/g, (_m, name: string) => {
    const v = parts.params[name];
    return encodeURIComponent(asQueryText(v) || 'x');
  });
  const qs = new URLSearchParams(Object.entries(parts.query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, asQueryText(v)])).toString();
  const headers: Record<string, string> = {};
  if (parts.auth === 'write') headers.authorization = `Bearer ${writeKey}`;
  if (parts.auth === 'read') headers.authorization = `Bearer ${readKey}`;
  if (parts.auth === 'garbage') headers.authorization = 'Bearer folio_garbage';
  if (parts.auth === 'session') {
    headers.cookie = browser.cookie!;
    headers['x-csrf-token'] = browser.csrf!;
  }
  const hasBody = route.method !== 'GET' && route.method !== 'HEAD' && route.method !== 'OPTIONS';
  if (hasBody) headers['content-type'] = parts.type;
  if (url.includes('/collect')) headers.origin = 'https://docs.example.com';
  const body = !hasBody ? undefined : parts.type.includes('json') && typeof parts.body !== 'string' ? JSON.stringify(parts.body) : asQueryText(parts.body);
  const res = await fetch(`${server.url}${url}${qs ? `?${qs}` : ''}`, { method: route.method, headers, body });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers, where: `${route.method} ${url}?${qs}` };
}

function targets(): Target[] {
  return server.app.routeCatalog
    .filter((r) => r.method !== 'HEAD' && !r.url.startsWith('/docs') && r.url !== '/openapi.json' && r.url !== '/metrics')
    .filter((r) => !(r.url === '/api/logout')) // would end the fuzzing session; tested in test/dashboard
    .map((route) => ({ route, ids }));
}

describe('fuzzing every operation', () => {
  it('covers every operation of /openapi.json and every dashboard /api route', async () => {
    const doc = (await server.api('GET', '/openapi.json')).body;
    const fuzzed = new Set(targets().map((t) => `${t.route.method} ${t.route.url.replace(/:([A-Za-z]+)/g, '{$1}')}`));
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) expect(fuzzed, `${method} ${path}`).toContain(`${method.toUpperCase()} ${path}`);
    }
    expect([...fuzzed].filter((r) => r.includes(' /api/')).length).toBeGreaterThanOrEqual(10);
  });

  it('answers every hostile request with a 4xx body or a success, never a 5xx', async () => {
    for (const target of targets()) {
      const schema = (target.route.schema ?? {}) as Schema;
      const paramNames = [...target.route.url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
      const params = fc.record(
        Object.fromEntries(paramNames.map((n) => [n, fc.oneof({ weight: 4, arbitrary: fc.constant(ids[n] ?? 'x') }, { weight: 1, arbitrary: valueFor(schema.params?.properties?.[n]) })])),
      );
      const query = valueFor(schema.querystring ?? { type: 'object', properties: {} }).map((q) => (q && typeof q === 'object' && !Array.isArray(q) ? (q as Record<string, unknown>) : {}));
      const body = valueFor(schema.body);
      const auth = target.route.url.startsWith('/api/')
        ? fc.constantFrom('session', 'session', 'session', 'session', 'none')
        : fc.constantFrom('write', 'write', 'write', 'write', 'read', 'none', 'garbage', 'session');
      const types = ['text/plain', 'application/x-ndjson', 'application/xml', 'multipart/form-data; boundary=x'];
      const type = fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 3, arbitrary: fc.constantFrom(...types) });
      await fc.assert(
        fc.asyncProperty(params, query, body, auth, type, async (p, q, b, a, t) => {
          const res = await send(target, { params: p, query: q, body: b, auth: a, type: t });
          assertWellFormed(res.where, res);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    }
  }, 600_000);
});
