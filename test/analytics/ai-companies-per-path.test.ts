// The AI-companies report per path of one company on DuckDB (first-seen rows per path, key and visitor:
// daily_path_keys) answers exactly as plain Sets and as the naive COUNT(DISTINCT) over the events, for
// every company of the lists and whole-day ranges: compacted rows, rows not compacted yet, late rows
// for earlier days, an assistant's host that is the site's own (its clicks credit no one), retention.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { aiCompanies, duckdbFromEvents, knownCompanies } from '../../src/analytics/reports/ai-companies.ts';
import { ownHostsOf, type OwnHosts } from '../../src/analytics/own-hosts.ts';
import { tempDir } from '../helpers/server.ts';
import { DAY, DAYS, expectedCompanies, generate, OWN, P, RANGES, RULES, START, type Ref } from '../analytics-clickhouse/keys-reference.ts';

/** The site's own hosts with an assistant's host among them. */
const OWN_CHATGPT = ownHostsOf(['https://docs.example.com', 'https://chatgpt.com']);
/** The generated views' companies (by agent, by host, by both) and one of the lists that took and sent nothing. */
const COMPANIES = ['OpenAI', 'Anthropic', 'Perplexity', 'Google', 'Common Crawl', 'Mistral'];
const WHOLE_DAYS = RANGES.filter((r) => (r.from === null || r.from % DAY === 0) && (r.to === null || r.to % DAY === 0));

/** The reference with `own`'s clicks credited to no one (the generated rows credit all but docs.example.com). */
const ownedBy = (ref: Ref[], own: OwnHosts) => ref.map((e) => (e.cls === 'human' && e.host !== null && own.has(e.host) ? { ...e, company: null } : e));

async function check(engine: DuckDbEngine, ref: Ref[], when: string): Promise<void> {
  const pk = Number((await engine.sql(`SELECT project_key FROM projects WHERE project_id = '${P}'`))[0].project_key);
  for (const own of [OWN, OWN_CHATGPT]) {
    const owned = ownedBy(ref, own);
    for (const range of WHOLE_DAYS) {
      for (const company of COMPANIES) {
        const params = { range, limit: 250, offset: 0, ownHosts: own, rules: RULES, company };
        const label = `${when}, own ${[...own].join(' ')}, range ${JSON.stringify(range)}, ${company}`;
        const got = await engine.run(aiCompanies, { projectId: P, ...params });
        expect(got.rows, label).toEqual(expectedCompanies(owned, range, company));
        const naive = await engine.run({ ...aiCompanies, duckdb: (db) => duckdbFromEvents(db, pk, params) }, { projectId: P, ...params });
        expect(got, label).toEqual(naive);
      }
    }
  }
}

describe('DuckDB: one AI company per path over first-seen rows per path', () => {
  const dir = tempDir('folio-ai-per-path-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts exactly as plain Sets and the naive query: compacted, not compacted, late rows, own hosts, retention', async () => {
    const engine = await DuckDbEngine.open({ file: path.join(dir, 'analytics.duckdb'), readConnections: 1 });
    try {
      const first = generate(41, 900, 2, 2);
      for (let s = 0; s < first.events.length; s += 300) await engine.write(first.events.slice(s, s + 300));
      await check(engine, first.ref, 'nothing compacted');
      await engine.compact();
      await check(engine, first.ref, 'all compacted');
      // Rows for days before and after (late for the compacted days), not compacted yet, then compacted.
      const late = generate(42, 900, 0, DAYS);
      for (let s = 0; s < late.events.length; s += 300) await engine.write(late.events.slice(s, s + 300));
      const both = [...first.ref, ...late.ref];
      expect(both.some((e) => e.cls === 'human' && e.host === 'chatgpt.com')).toBe(true);
      expect(COMPANIES.every((c) => knownCompanies(RULES).has(c))).toBe(true);
      await check(engine, both, 'late rows not compacted yet');
      await engine.compact();
      expect(Number((await engine.sql('SELECT count(*) AS n FROM daily_path_keys'))[0].n)).toBeGreaterThan(0);
      await check(engine, both, 'late rows compacted');
      // Retention: the days before the cut-off are gone, and keys first seen before it count from it.
      const cutoff = START / DAY + 2;
      await engine.deleteBefore(cutoff);
      expect(Number((await engine.sql(`SELECT count(*) AS n FROM daily_path_keys WHERE day < ${cutoff} OR prev_t < ${cutoff}`))[0].n)).toBe(0);
      await check(engine, both.filter((e) => e.ts >= cutoff * DAY), 'after retention');
    } finally {
      await engine.close();
    }
  }, 240_000); // 5 states × 2 own-host sets × every range and company × 2 queries: ~35 s alone, over a minute on 2 busy cores
});
