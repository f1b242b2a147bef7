// A server whose standard output nobody reads any more (a terminal gone, a pipe whose reader hung)
// keeps answering and stops on SIGTERM: its log waits LOG_BLOCKED_MS for the reader at most, then
// drops lines, instead of retrying the flush on exit forever on the main thread (which pino's
// default destination does: the process then never exits).
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startProcess } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { LOG_BLOCKED_MS } from '../../src/util/log-destination.ts';

const dir = tempDir('folio-blocked-stdout-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('folio serve with a standard output nobody reads', () => {
  it('answers every request and exits on SIGTERM once the pipe is full', async () => {
    const child = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], {
      FOLIO_DATA_DIR: dir,
      PORT: '0',
      LOG_LEVEL: 'info',
      FOLIO_ACCESS_LOG: 'true', // two log lines per request
      ANTHROPIC_API_KEY: 'x',
    });
    try {
      // Stop reading: the pipe (64 KiB) and Node's buffer fill after a few hundred requests.
      child.proc.stdout!.removeAllListeners('data');
      child.proc.stdout!.pause();
      for (let i = 0; i < 3000; i++) {
        const res = await fetch(`${child.url}/healthz?n=${i}&pad=${'x'.repeat(200)}`, { signal: AbortSignal.timeout(10_000) });
        expect(res.status).toBe(200);
      }
      // The flush on exit gives up after LOG_BLOCKED_MS of blocked writes.
      child.proc.kill('SIGTERM');
      const code = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r('still running'), LOG_BLOCKED_MS + 15_000))]);
      expect(code).toBe(0);
    } finally {
      child.proc.kill('SIGKILL');
    }
  }, 90_000);
});
