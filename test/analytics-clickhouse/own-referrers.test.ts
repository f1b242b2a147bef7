// A project's own hosts (its site origins) are no referrers in the referrers report, on DuckDB, on
// ClickHouse 18.16 (the server of FOLIO_TEST_CLICKHOUSE_URL) and on ClickHouse 26.x (chdb, always):
// rows stored with such a referrer — as a host, or as the whole URL older rows kept — read as having
// none, against plain Sets. The same writes carry not-found views (the engines write them beside the
// page views) and their report is checked too.
import { notFound } from '../../src/analytics/reports/not-found.ts';
import { referrers } from '../../src/analytics/reports/referrers.ts';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { ownHostsOf, withoutOwnReferrers } from '../../src/analytics/own-hosts.ts';
import { fieldsFrom, runLogImport } from '../../src/analytics/log-import.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { rng, utf8Compare } from '../analytics/helpers.ts';
import { freshName } from './helpers.ts';
import { threeEngines } from './engines.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const DAY = 86_400_000;
const RULES = ClassificationRules.load();
const START = Date.UTC(2025, 5, 27);
const P = 'prj_own_referrers';
const OWN = ownHostsOf(['https://docs.example.com', 'http://127.0.0.1:5173']);
/** Stored referrers, and the host each must count under (null: none). */
const STORED: [string | null, string | null, string][] = [
  [null, null, 'other'],
  ['chatgpt.com', 'chatgpt.com', 'ai_assistant'],
  ['www.google.com', 'www.google.com', 'search'],
  ['blog.example.org', 'blog.example.org', 'other'],
  // The project's own pages: as hosts (what ingest stored before it dropped them) and as whole URLs (older rows).
  ['docs.example.com', null, 'other'],
  ['127.0.0.1', null, 'other'],
  ['https://docs.example.com/guide/start?x=1', null, 'other'],
  ['http://127.0.0.1:5173/', null, 'other'],
  // A subdomain or another port's host is not an origin of the project: still a referrer.
  ['api.docs.example.com', 'api.docs.example.com', 'other'],
  ['https://News.YCombinator.com/item?id=1', 'news.ycombinator.com', 'social'],
];

interface Ref {
  ts: number;
  visitor: bigint;
  cls: 'human' | 'ai';
  host: string | null;
  source: string;
}

function generate(seed: number, n: number): { events: StoredEvent[]; ref: Ref[]; notFound: number } {
  const r = rng(seed);
  const events: StoredEvent[] = [];
  const ref: Ref[] = [];
  let notFound = 0;
  for (let i = 0; i < n; i++) {
    const ts = START + Math.floor(r() * 5 * DAY);
    const [referrer, host, source] = STORED[Math.floor(r() * STORED.length)];
    const cls = r() < 0.65 ? 'human' : 'ai';
    const visitor = BigInt(1 + Math.floor(r() * 70));
    const missing = r() < 0.05;
    events.push({ projectId: P, ts, path: `/p${Math.floor(r() * 4)}`, visitor, cls: CLASS_CODE[cls], agent: null, referrer, source: SOURCE.api, importKey: null, notFound: missing, group: 0 });
    if (missing) notFound++;
    else ref.push({ ts, visitor, cls, host, source });
  }
  return { events, ref, notFound };
}

function expected(ref: Ref[]) {
  const counts = (list: Ref[]) => ({
    human: new Set(list.filter((e) => e.cls === 'human').map((e) => e.visitor)).size,
    ai: new Set(list.filter((e) => e.cls === 'ai').map((e) => e.visitor)).size,
    total: new Set(list.map((e) => e.visitor)).size,
  });
  const referred = ref.filter((e) => e.host !== null);
  const hosts = [...new Set(referred.map((e) => e.host!))].map((host) => {
    const list = referred.filter((e) => e.host === host);
    return { host, source: list[0].source, ...counts(list) };
  });
  hosts.sort((a, b) => b.total - a.total || utf8Compare(a.host, b.host));
  const classes = ['ai_assistant', 'search', 'social', 'other'].map((source) => ({ source, ...counts(referred.filter((e) => e.source === source)) }));
  // Every human counts in the day's humans, self-referred or not.
  const days = [...new Set(ref.map((e) => Math.floor(e.ts / DAY)))].sort((a, b) => a - b).flatMap((day) => {
    const humans = ref.filter((e) => e.cls === 'human' && Math.floor(e.ts / DAY) === day);
    if (humans.length === 0) return [];
    return [{ start: day * DAY, humans: new Set(humans.map((e) => e.visitor)).size, fromAiAssistant: new Set(humans.filter((e) => e.source === 'ai_assistant').map((e) => e.visitor)).size }];
  });
  return { classes, rows: hosts, days };
}

const { backends: BACKENDS, cleanup } = threeEngines('folio-own-referrers-');
afterAll(cleanup);

describe.each(BACKENDS)('$name: the project’s own hosts are no referrers', ({ skip, open, drop }) => {
  it.skipIf(skip)('reads views referred by its own pages as having no referrer, exactly as plain Sets', async () => {
    const store = freshName('folio_own');
    const engine = await open(store);
    try {
      const data = generate(11, 1500);
      // Several writes, each with page views and not-found views (written beside each other).
      for (let s = 0; s < data.events.length; s += 300) await engine.write(data.events.slice(s, s + 300));
      await engine.compact();
      const want = expected(data.ref);
      const all = { from: null, to: null };
      const report = await engine.run(referrers, { projectId: P, range: all, limit: 100, offset: 0, ownHosts: OWN, rules: RULES });
      expect(report.rows).toEqual(want.rows);
      expect(report.classes).toEqual(want.classes);
      expect(report.aiShare).toEqual(want.days);
      // Paged by three: the same rows in the same order.
      const paged = [];
      for (let offset = 0; ; offset += 3) {
        const page = await engine.run(referrers, { projectId: P, range: all, limit: 3, offset, ownHosts: OWN, rules: RULES });
        paged.push(...page.rows);
        if (!page.hasMore) break;
      }
      expect(paged).toEqual(want.rows);
      // Without own hosts the same rows name the site itself: the rule is the read's, not the data's.
      const plain = await engine.run(referrers, { projectId: P, range: all, limit: 100, offset: 0, ownHosts: new Set(), rules: RULES });
      expect(plain.rows.map((r) => r.host)).toEqual(expect.arrayContaining(['docs.example.com', '127.0.0.1']));
      expect((await engine.run(notFound, { projectId: P, range: all, limit: 100, offset: 0 })).totals.views).toBe(data.notFound);
    } finally {
      await engine.close();
      await drop(store);
    }
  });

  it.skipIf(skip)('a log import (the bulk endpoint’s and the direct import’s reader) stores no own referrer of a page view', async () => {
    const store = freshName('folio_own_log');
    const engine = await open(store);
    try {
      const ua = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
      const line = (ip: string, status: number, referrer: string) => `${ip} - - [27/Jun/2025:10:00:00 +0000] "GET /docs/a HTTP/1.1" ${status} 100 "${referrer}" "${ua}"`;
      const log = [
        line('203.0.113.1', 200, 'https://docs.example.com/guide'),
        line('203.0.113.2', 200, 'http://127.0.0.1:5173/'),
        line('203.0.113.3', 200, 'https://www.google.com/'),
        line('203.0.113.4', 200, '-'),
        line('203.0.113.5', 404, 'https://docs.example.com/guide'),
      ];
      const r = await runLogImport(withoutOwnReferrers(engine, OWN), {
        projectId: P,
        format: 'combined',
        fields: fieldsFrom(),
        batch: 1000,
        secret: 'test-secret-0123456789abcdef',
        rules: RULES,
        input: { stream: Readable.from([log.join('\n') + '\n']), name: 'the test log' },
      });
      expect(r.recorded).toBe(5);
      await engine.compact();
      const all = { from: null, to: null };
      // Read without the rule: what was stored.
      const stored = await engine.run(referrers, { projectId: P, range: all, limit: 100, offset: 0, ownHosts: new Set(), rules: RULES });
      expect(stored.rows.map((x) => [x.host, x.total])).toEqual([['www.google.com', 1]]);
      expect(stored.aiShare.reduce((n, d) => n + d.humans, 0)).toBe(4);
      // A not-found view keeps its own-site referrer: a link on the site is broken.
      expect((await engine.run(notFound, { projectId: P, range: all, limit: 10, offset: 0 })).rows[0].referrers).toEqual([{ host: 'docs.example.com', visitors: 1 }]);
    } finally {
      await engine.close();
      await drop(store);
    }
  });
});
