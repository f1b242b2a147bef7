// Which referring hosts DuckDB keeps rows of per path (daily_path_keys): opened as the analytics
// service opens it, only the hosts its lists class as AI assistants (the only ones a report reads per
// path). A store opened with other lists refolds those rows from its events: a host the operator
// newly lists as an AI assistant has its history per path, and every count stays exact against
// plain Sets (keys-reference.ts).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { DuckDbEngine, type DuckDbOptions } from '../../src/analytics/engines/duckdb/index.ts';
import { aiCompanies } from '../../src/analytics/reports/ai-companies.ts';
import { duckdbPathHosts } from '../../src/analytics/reports/referrers.ts';
import { KEY_KIND } from '../../src/analytics/traffic-class.ts';
import { check, DAYS, expectedCompanies, generate, OWN, P, RANGES, RULES, type Ref } from '../analytics-clickhouse/keys-reference.ts';
import { tempDir } from '../helpers/server.ts';

const HN = 'news.ycombinator.com';
/** The lists with one more AI assistant: a host the built-in lists class as social. */
const WITH_HN = ClassificationRules.withExtra({ sources: [{ host: HN, category: 'ai_assistant', company: 'Y Combinator' }] });
/** The reference as WITH_HN reads it: humans sent from HN credit its company. */
const withHn = (ref: Ref[]): Ref[] => ref.map((e) => (e.cls === 'human' && e.host === HN ? { ...e, source: 'ai_assistant', company: 'Y Combinator' } : e));

const HOST_ROWS = `SELECT * FROM daily_path_keys WHERE kind = ${KEY_KIND.host} ORDER BY ALL`;
const hostsPerPath = async (engine: DuckDbEngine) => (await engine.sql(`SELECT DISTINCT k FROM daily_path_keys WHERE kind = ${KEY_KIND.host} ORDER BY k`)).map((r) => r.k);
const BUILT_IN_AI = ['chat.openai.com', 'chatgpt.com', 'claude.ai', 'www.perplexity.ai'];

async function perPathExact(engine: DuckDbEngine, ref: Ref[], rules: ClassificationRules, companies: string[], when: string): Promise<void> {
  for (const range of RANGES) {
    for (const company of companies) {
      const got = await engine.run(aiCompanies, { projectId: P, range, limit: 100, offset: 0, ownHosts: OWN, rules, company });
      expect(got.rows, `${when}, ${company} per path, ${JSON.stringify(range)}`).toEqual(expectedCompanies(ref, range, company));
    }
  }
}

describe('the referring hosts DuckDB keeps per path', () => {
  const dir = tempDir('folio-path-hosts-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const early = generate(31, 900, 0, 3);
  const late = generate(32, 600, 0, DAYS);
  const all = [...early.ref, ...late.ref];
  const file = path.join(dir, 'analytics.duckdb');
  const opened = (rules: ClassificationRules | null, at = file): Promise<DuckDbEngine> => {
    const opts: DuckDbOptions = { file: at, readConnections: 1 };
    if (rules) opts.pathHosts = duckdbPathHosts(rules.sources);
    return DuckDbEngine.open(opts);
  };
  /** A store of the same events written and compacted once, opened with `rules`: the rows a compaction makes. */
  async function freshRows(rules: ClassificationRules | null, name: string): Promise<unknown[]> {
    const engine = await opened(rules, path.join(dir, `${name}.duckdb`));
    try {
      await engine.write([...early.events, ...late.events]);
      await engine.compact();
      return await engine.sql(HOST_ROWS);
    } finally {
      await engine.close();
    }
  }

  it('keeps the AI assistants\' rows only, and the reports stay exact', async () => {
    const engine = await opened(RULES);
    try {
      await engine.write(early.events);
      await engine.compact();
      await engine.write(late.events);
      expect(await hostsPerPath(engine)).toEqual(BUILT_IN_AI);
      await check(engine, all, 'AI hosts per path, late rows not compacted');
      await engine.compact();
      expect(await hostsPerPath(engine)).toEqual(BUILT_IN_AI);
      await check(engine, all, 'AI hosts per path, compacted');
      // A report asked with other lists than the store's is refused, not answered short.
      const asked = { projectId: P, range: RANGES[0], limit: 100, offset: 0, ownHosts: OWN, rules: WITH_HN, company: 'Y Combinator' };
      await expect(engine.run(aiCompanies, asked)).rejects.toThrow(/other lists/);
    } finally {
      await engine.close();
    }
  });

  it('refolds them when the lists name another AI assistant: its whole history per path counts', async () => {
    const engine = await opened(WITH_HN);
    try {
      expect(await hostsPerPath(engine)).toEqual([...BUILT_IN_AI, HN].sort());
      expect(await engine.sql(HOST_ROWS)).toEqual(await freshRows(WITH_HN, 'fresh-with-hn'));
      await perPathExact(engine, withHn(all), WITH_HN, ['Y Combinator', 'OpenAI', 'Perplexity'], 'refolded for the new lists');
      // New rows of the host are folded per path from now on.
      const more = generate(33, 300, DAYS - 1, 1);
      await engine.write(more.events);
      await perPathExact(engine, withHn([...all, ...more.ref]), WITH_HN, ['Y Combinator'], 'new rows not compacted');
      await engine.compact();
      await perPathExact(engine, withHn([...all, ...more.ref]), WITH_HN, ['Y Combinator'], 'new rows compacted');
    } finally {
      await engine.close();
    }
  });

  it('refolds them back when the host leaves the lists, keeps every host for the default, and changes nothing opened again alike', async () => {
    const everything = [...all, ...generate(33, 300, DAYS - 1, 1).ref];
    let engine = await opened(RULES);
    try {
      expect(await hostsPerPath(engine)).toEqual(BUILT_IN_AI);
      await check(engine, everything, 'back to the built-in lists');
    } finally {
      await engine.close();
    }
    engine = await opened(null);
    const rows = await engine.sql(HOST_ROWS);
    await engine.close();
    // The events' every referring host (the site's own too: the reports leave it out when they read).
    const hosts = ['blog.example.org', 'chat.openai.com', 'chatgpt.com', 'claude.ai', 'docs.example.com', 'duckduckgo.com', HN, 'www.google.com', 'www.perplexity.ai'];
    expect([...new Set(rows.map((r) => r.k))].sort()).toEqual(hosts);
    engine = await opened(null);
    try {
      expect(await engine.sql(HOST_ROWS)).toEqual(rows);
      await check(engine, everything, 'every host kept');
    } finally {
      await engine.close();
    }
  });
});
