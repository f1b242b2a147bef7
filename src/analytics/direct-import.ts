// `folio analytics import` with no server: the logs go through runLogImport (log-import.ts) straight
// into the analytics store — ClickHouse when CLICKHOUSE_URL is set (any number of processes may
// write), otherwise the DuckDB file (refused clearly while a server holds it).
import { loadConfig } from '../config.ts';
import { openStore } from '../store/database.ts';
import { ProjectStore, projectView } from '../store/projects.ts';
import { analyticsFile } from './index.ts';
import { AnalyticsLockedError, DuckDbEngine } from './engines/duckdb/index.ts';
import { duckdbPathHosts } from './reports/referrers.ts';
import type { AnalyticsEngine } from './engine.ts';
import { ClassificationRules } from './classify.ts';
import { ImportError } from './import-error.ts';
import type { LogFormat } from './log-lines/line-converter.ts';
import { runLogImport, type ImportProgress, type LogImportResult } from './log-import.ts';
import { ownHostsOf, withoutOwnReferrers, type OwnHosts } from './own-hosts.ts';

export type DirectImportResult = LogImportResult;

async function openEngine(projectId: string): Promise<{ engine: AnalyticsEngine; secret: string; rules: ClassificationRules; own: OwnHosts }> {
  const config = loadConfig();
  let rules: ClassificationRules;
  try {
    rules = ClassificationRules.load(config.analytics.agentsFile);
  } catch (err) {
    throw new ImportError((err as Error).message);
  }
  const store = await openStore(config);
  let own: OwnHosts;
  try {
    const project = await new ProjectStore(store.db, config).get(projectId);
    if (!project) throw new ImportError(`Project "${projectId}" does not exist.`);
    own = ownHostsOf(projectView(project).siteOrigins);
  } finally {
    await store.close();
  }
  if (config.clickhouseUrl) {
    // The scale engine: a shared database, no file lock; import dedupe is the engine's own, as over HTTP.
    try {
      return { engine: await (await import('./engines/clickhouse/index.ts')).createClickHouseEngine(config.clickhouseUrl), secret: config.secret, rules, own };
    } catch (err) {
      throw new ImportError((err as Error).message);
    }
  }
  try {
    return { engine: await DuckDbEngine.open({ file: analyticsFile(config), readConnections: 1, pathHosts: duckdbPathHosts(rules.sources) }), secret: config.secret, rules, own };
  } catch (err) {
    if (err instanceof AnalyticsLockedError) throw new ImportError(err.message);
    throw err;
  }
}

export async function importDirect(
  files: string[],
  opts: { project: string; format: LogFormat; fields: Record<string, string[]>; batch: number },
  progress: ImportProgress,
): Promise<DirectImportResult> {
  const { engine, secret, rules, own } = await openEngine(opts.project);
  try {
    const result = await runLogImport(withoutOwnReferrers(engine, own), { projectId: opts.project, format: opts.format, fields: opts.fields, batch: opts.batch, secret, rules, input: { files }, progress });
    // ClickHouse: servers fold, one at a time across the deployment (answers are exact before that).
    if (engine instanceof DuckDbEngine) await engine.compact();
    return result;
  } finally {
    await engine.close();
  }
}
