// `folio healthcheck`, the image's HEALTHCHECK for every role it runs. The long-running process of a
// data directory (`serve` or `worker`) says what it is in <data dir>/health.json; the check reads
// that: a server is healthy when its /healthz answers, a worker when its beat is fresh. A worker
// beats every BEAT_MS once its store has answered, so a wedged event loop or a store that stopped
// answering turns it unhealthy within STALE_MS.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { CodedError } from '../errors.ts';
import { processAlive } from '../util/process-alive.ts';

export const HEALTH_FILE = 'health.json';
export const BEAT_MS = 10_000;
export const STALE_MS = 3 * BEAT_MS;
/** How long the check waits for /healthz (the HEALTHCHECK's own timeout is longer). */
const FETCH_TIMEOUT_MS = 3_000;

export type HealthRecord = { role: 'serve'; pid: number; url: string } | { role: 'worker'; pid: number; beatAt: string };

function write(config: Config, record: HealthRecord): void {
  const file = path.join(config.dataDir, HEALTH_FILE);
  // Written whole and renamed, so the check never reads half a file.
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(record));
  renameSync(`${file}.${process.pid}.tmp`, file);
}

/** `folio serve` is listening at `url`. */
export function recordServe(config: Config, url: string): void {
  write(config, { role: 'serve', pid: process.pid, url });
}

/** `folio worker`: a beat now and every BEAT_MS while `storeAnswers()`; returns the stop. */
export function startWorkerBeat(config: Config, storeAnswers: () => Promise<boolean>): () => void {
  const beat = async () => {
    if (await storeAnswers()) write(config, { role: 'worker', pid: process.pid, beatAt: new Date().toISOString() });
  };
  void beat();
  const timer = setInterval(() => void beat(), BEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

function unhealthy(message: string): CodedError {
  return new CodedError('unhealthy', message);
}

function readRecord(config: Config): HealthRecord {
  const file = path.join(config.dataDir, HEALTH_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw unhealthy(`No Folio server or worker has started on ${config.dataDir} yet.`);
  }
  try {
    return JSON.parse(text) as HealthRecord;
  } catch {
    throw unhealthy(`${file} is not a health record.`);
  }
}

/** The one-line verdict for the process of this data directory; throws `unhealthy` otherwise. */
export async function checkHealth(config: Config, now = Date.now()): Promise<string> {
  const record = readRecord(config);
  if (!processAlive(record.pid)) throw unhealthy(`The Folio ${record.role} process (pid ${record.pid}) is not running.`);
  if (record.role === 'worker') {
    const age = now - Date.parse(record.beatAt);
    if (!(age <= STALE_MS)) throw unhealthy(`The Folio worker's last beat was ${Math.round(age / 1000)} s ago (its store did not answer, or it is stuck).`);
    return `healthy: folio worker (pid ${record.pid}), last beat ${Math.round(age / 1000)} s ago`;
  }
  const url = `${record.url}/healthz`;
  const res = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) }).catch((err: Error) => {
    throw unhealthy(`${url} did not answer: ${err.message}.`);
  });
  if (!res.ok) throw unhealthy(`${url} answered ${res.status}.`);
  return `healthy: folio serve (pid ${record.pid}) answers ${url}`;
}
