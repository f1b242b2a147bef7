// `folio analytics import` with no server: the worker thread (import-worker.ts) reads and converts the
// logs; this thread writes its batches into the analytics store — ClickHouse when CLICKHOUSE_URL is
// set (any number of processes may write), otherwise the DuckDB file (refused clearly while a server
// holds it).
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../config.ts';
import { openStore } from '../store/database.ts';
import { ProjectStore } from '../store/projects.ts';
import { analyticsFile } from './index.ts';
import { AnalyticsLockedError, DuckDbEngine } from './engines/duckdb/index.ts';
import { VisitorResolver } from './deferred-visitors.ts';
import type { AnalyticsEngine } from './engine.ts';
import { readAgentsFile, type AgentEntry } from './classify.ts';
import { VisitorIds } from './identity.ts';
import type { LineError } from './import-columns.ts';
import { ImportError, type ImportProgress, type LogFormat, type SkipReason } from './import.ts';
import type { ImportWorkerData, MainMessage, WorkerMessage } from './import-worker.ts';

export interface DirectImportResult {
  lines: number;
  skipped: Record<SkipReason, number>;
  recorded: number;
  duplicates: number;
  crawlers: number;
  rejected: number;
  errors: LineError[];
}

async function openEngine(projectId: string): Promise<{ engine: AnalyticsEngine; secret: string; agents: AgentEntry[] }> {
  const config = loadConfig();
  let agents: AgentEntry[] = [];
  try {
    if (config.analytics.agentsFile) agents = readAgentsFile(config.analytics.agentsFile);
  } catch (err) {
    throw new ImportError((err as Error).message);
  }
  const store = await openStore(config);
  try {
    if (!(await new ProjectStore(store.db, config).get(projectId))) throw new ImportError(`Project "${projectId}" does not exist.`);
  } finally {
    await store.close();
  }
  if (config.clickhouseUrl) {
    // The scale engine: a shared database, no file lock; import dedupe is the engine's own, as over HTTP.
    try {
      return { engine: await (await import('./engines/clickhouse/index.ts')).createClickHouseEngine(config.clickhouseUrl), secret: config.secret, agents };
    } catch (err) {
      throw new ImportError((err as Error).message);
    }
  }
  try {
    return { engine: await DuckDbEngine.open({ file: analyticsFile(config), readConnections: 1 }), secret: config.secret, agents };
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
  const { engine, secret, agents } = await openEngine(opts.project);
  try {
    const data: ImportWorkerData = {
      files,
      format: opts.format,
      fields: opts.fields,
      projectId: opts.project,
      secret,
      agents,
      now: Date.now(),
      batch: opts.batch,
      // Two batches waiting or being written, one being built: the worker rarely waits for a write.
      ahead: 3,
    };
    const fromStdin = files.includes('-');
    const worker = new Worker(new URL('./import-worker.ts', import.meta.url), { workerData: data, stdin: fromStdin });
    // Batches in flight (`ahead`) plus the one being built may still use references the worker has not settled.
    const resolver = new VisitorResolver(new VisitorIds(secret), (data.ahead + 2) * opts.batch);
    let recorded = 0;
    let duplicates = 0;
    let writing: Promise<void> = Promise.resolve();
    let failure: Error | null = null;
    let finished = false;
    const done = await new Promise<Extract<WorkerMessage, { type: 'done' }>>((resolve, reject) => {
      if (fromStdin) process.stdin.pipe(worker.stdin!);
      const fail = (err: Error) => {
        failure ??= err;
        void worker.terminate();
        if (fromStdin) process.stdin.unpipe().destroy(); // nothing more will be read
        reject(failure);
      };
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (!finished) fail(new Error(`The import worker stopped (exit code ${code}).`));
      });
      worker.on('message', (m: WorkerMessage) => {
        if (failure) return;
        if (m.type === 'file') progress.file(m.file, m.size);
        else if (m.type === 'progress') progress.update(m.bytes, m.lines);
        else if (m.type === 'error') fail(m.expected ? new ImportError(m.message) : new Error(`The import worker failed: ${m.message}`));
        else if (m.type === 'done') {
          finished = true;
          writing.then(() => resolve(m), fail);
        } else if (m.type === 'batch') {
          // Batches are written in order; the worker is told when each one is stored.
          // Ids now, while the engine writes the batch before (this thread is free then).
          let ids: BigInt64Array;
          try {
            ids = resolver.resolve(m.identities, m.columns.visitor, m.columns.n);
          } catch (err) {
            return fail(err as Error);
          }
          writing = writing.then(async () => {
            const { duplicates: d } = await engine.writeImport(m.columns);
            duplicates += d;
            recorded += m.columns.n - d;
            worker.postMessage({ type: 'written', first: m.identities.first, ids } satisfies MainMessage, [ids.buffer as ArrayBuffer]);
          });
          writing.catch(fail);
        }
      });
    });
    await worker.terminate();
    // ClickHouse: servers fold, one at a time across the deployment (answers are exact before that).
    if (engine instanceof DuckDbEngine) await engine.compact();
    return { lines: done.lines, skipped: done.skipped, recorded, duplicates, crawlers: done.crawlers, rejected: done.rejected, errors: done.errors };
  } finally {
    await engine.close();
  }
}
