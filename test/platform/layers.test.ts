// Import direction, checked on the sources: domain code throws CodedErrors and never an HTTP error
// (the HTTP layer maps codes to statuses in one table, src/http/error-status.ts), and contracts/
// (the schemas every layer shares) imports nothing of Folio.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HTTP_STATUS, httpErrorOf } from '../../src/http/error-status.ts';
import { CodedError } from '../../src/errors.ts';
import { RateLimitedError } from '../../src/store/rate-limits.ts';

const SRC = path.resolve(import.meta.dirname, '../../src');
const DOMAIN = ['jobs', 'analytics', 'store', 'git', 'codehost', 'agent', 'net', 'util', 'contracts', 'admin', 'suggestions', 'sandbox', 'site-build'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('layers', () => {
  it('no domain module uses an HTTP error (ApiError, badRequest, notFound, …) or imports src/http', () => {
    const offenders: string[] = [];
    for (const area of DOMAIN) {
      for (const file of sources(path.join(SRC, area))) {
        const text = readFileSync(file, 'utf8');
        const fromErrors = [...text.matchAll(/import \{([^}]*)\} from '[./]*\/errors\.ts'/g)].flatMap((m) => m[1].split(',').map((n) => n.trim().replace(/^type /, '')));
        const httpHelpers = fromErrors.filter((n) => /^(ApiError|badRequest|notFound|conflict|forbidden|unauthorized|tooManyRequests)$/.test(n));
        if (httpHelpers.length > 0 || /\bApiError\b/.test(text) || /from '[./]*\/http\//.test(text)) {
          offenders.push(path.relative(SRC, file));
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('no file under src/http imports src/store: routes use the narrow services (src/http/services.ts)', () => {
    const offenders = sources(path.join(SRC, 'http')).filter((f) => /from '(\.\.\/)+store\//.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('no route plugin takes the whole services bag', () => {
    const offenders = sources(path.join(SRC, 'http/routes')).filter((f) => /services\.ts'/.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('the store imports nothing of git, net or codehost: what users send is checked above it', () => {
    const offenders = sources(path.join(SRC, 'store')).filter((f) => /from '\.\.\/(git|net|codehost)\//.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('git does not import config (the config → git → config loop stays cut)', () => {
    const offenders = sources(path.join(SRC, 'git')).filter((f) => /from '\.\.\/config\.ts'/.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('the sandbox builds its commands\' environment from nothing: it never reads process.env nor imports config', () => {
    const offenders = sources(path.join(SRC, 'sandbox')).filter((f) => {
      const text = readFileSync(f, 'utf8');
      return /process\.env/.test(text) || /from '\.\.\/config\.ts'/.test(text);
    });
    expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('contracts/ imports nothing of Folio but its own files', () => {
    const outside = sources(path.join(SRC, 'contracts')).filter((f) => /from '\.\.\//.test(readFileSync(f, 'utf8')));
    expect(outside.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('a job\'s status is written only by src/jobs/lifecycle, which alone queues webhooks and announces transitions', () => {
    const rel = (f: string) => path.relative(SRC, f);
    const outside = sources(SRC).filter((f) => !rel(f).startsWith('jobs/lifecycle/'));
    const writesStatus = (text: string) =>
      /insertInto\(['"]jobs['"]\)/.test(text) ||
      /\bupdate\s+jobs\b[^;`]*\bset\b[^;`]*\bstatus\b/i.test(text) ||
      [...text.matchAll(/updateTable\(['"]jobs['"]\)([\s\S]*?)\.execute/g)].some((m) => /\bstatus\b/.test(m[1]));
    expect(outside.filter((f) => writesStatus(readFileSync(f, 'utf8'))).map(rel)).toEqual([]);
    // The outbox entry is written with the transition; the announcement happens in one place.
    const calling = (pattern: RegExp) => sources(SRC).filter((f) => pattern.test(readFileSync(f, 'utf8'))).map(rel);
    expect(calling(/\benqueueWebhook\(/)).toEqual(['jobs/lifecycle/context.ts', 'jobs/webhooks.ts']);
    expect(calling(/\.publish\(/)).toEqual(['jobs/events.ts', 'jobs/lifecycle/index.ts']);
  });

  it('only jobs and the store hold a transaction: other areas start jobs with their records through JobsService.startWith', () => {
    const offenders = sources(SRC)
      .filter((f) => !/^(jobs|store)\//.test(path.relative(SRC, f)))
      .filter((f) => /\bTransaction\b[^\n]*from 'kysely'|from 'kysely'[^\n]*\bTransaction\b|\.transact\(/.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('store rows do not reach HTTP: admin re-exports no row type and routes import none (they get views)', () => {
    const reexports = sources(path.join(SRC, 'admin')).filter((f) => /^export (type )?\{[^}]*\b\w+Row\b[^}]*\}/m.test(readFileSync(f, 'utf8')));
    const importers = sources(path.join(SRC, 'http')).filter((f) => /^import [^;]*\b\w+Row\b[^;]*;/m.test(readFileSync(f, 'utf8')));
    expect([...reexports, ...importers].map((f) => path.relative(SRC, f))).toEqual([]);
  });

  it('one table maps domain codes to statuses, with the hints as headers and details', () => {
    expect(HTTP_STATUS.job_archived).toBe(409);
    // The table is typed by the codes (src/errors.ts, ApiErrorCode): one left without a status does not compile.
    // @ts-expect-error invalid_cursor and the others have no status here
    const partial: typeof HTTP_STATUS = { invalid_request: 400 };
    expect(Object.keys(partial)).toEqual(['invalid_request']);
    const limited = httpErrorOf(new RateLimitedError('Too many.', { limit: 100, remaining: 0, resetSeconds: 42 }))!;
    expect(limited.status).toBe(429);
    expect(limited.headers).toEqual({ 'retry-after': '42', 'ratelimit-limit': '100', 'ratelimit-remaining': '0', 'ratelimit-reset': '42' });
    const invalid = httpErrorOf(new CodedError('invalid_date', 'Not a date.', { details: [{ message: 'x', path: '/querystring/dateFrom' }] }))!;
    expect(invalid.toBody()).toEqual({ error: 'Not a date.', code: 'invalid_date', details: [{ message: 'x', path: '/querystring/dateFrom' }] });
    // A code outside the table is not an HTTP answer (it stays a 500 with nothing revealed).
    expect(httpErrorOf(new CodedError('git_error', 'A git fetch failed.'))).toBeNull();
  });
});
