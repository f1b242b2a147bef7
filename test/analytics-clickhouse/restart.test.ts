// Durability across a ClickHouse crash: a private server (own data directory and ports, so other
// suites on the shared server are not disturbed) is killed with SIGKILL after the engine acknowledged
// writes, then restarted on the same directory: every acknowledged event is there, the answers are
// unchanged, a write while the server is down fails (nothing half-written) and succeeds after it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import { rng } from '../analytics/helpers.ts';
import { CLICKHOUSE_URL } from './helpers.ts';
import { timeseries } from '../../src/analytics/reports/timeseries.ts';
import { views } from '../../src/analytics/reports/views.ts';
import { visitors } from '../../src/analytics/reports/visitors.ts';

const BINARY = '/usr/sbin/clickhouse-server';
const DAY = 86_400_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

class PrivateServer {
  dir = mkdtempSync(path.join(os.tmpdir(), 'folio-ch-'));
  httpPort = 0;
  proc: ChildProcess | null = null;
  log = '';

  async start(): Promise<void> {
    if (!this.httpPort) {
      this.httpPort = await freePort();
      const tcpPort = await freePort();
      writeFileSync(
        path.join(this.dir, 'config.xml'),
        `<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>${this.httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${this.dir}/data/</path>
  <tmp_path>${this.dir}/tmp/</tmp_path>
  <user_files_path>${this.dir}/user_files/</user_files_path>
  <format_schema_path>${this.dir}/format_schemas/</format_schema_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
</yandex>`,
      );
    }
    const p = spawn(BINARY, [`--config-file=${path.join(this.dir, 'config.xml')}`], { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout!.on('data', (d) => (this.log += d));
    p.stderr!.on('data', (d) => (this.log += d));
    this.proc = p;
    for (let i = 0; i < 300; i++) {
      if (p.exitCode !== null) throw new Error(`private clickhouse-server exited (${p.exitCode}): ${this.log.slice(-2000)}`);
      try {
        const r = await fetch(`http://127.0.0.1:${this.httpPort}/?query=SELECT%201`);
        if ((await r.text()).trim() === '1') return;
      } catch {}
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`private clickhouse-server did not answer within 30 s: ${this.log.slice(-2000)}`);
  }

  async kill(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
    this.proc = null;
  }

  url(db: string): string {
    return `http://127.0.0.1:${this.httpPort}/${db}`;
  }

  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe.skipIf(!CLICKHOUSE_URL || !existsSync(BINARY))(
  `ClickHouse engine survives a server crash (needs FOLIO_TEST_CLICKHOUSE_URL and a local ${BINARY}, as installed by scripts/clickhouse-start.sh)`,
  () => {
    const server = new PrivateServer();

    beforeAll(async () => {
      await server.start();
    });

    afterAll(async () => {
      await server.dispose();
    });

    it('keeps every acknowledged event across SIGKILL and restart; a write while down fails cleanly', async () => {
      const r = rng(21);
      const t0 = Date.UTC(2025, 8, 1);
      const batches: StoredEvent[][] = [];
      for (let b = 0; b < 6; b++) {
        batches.push(
          Array.from({ length: 2000 }, (_, i) => ({
            projectId: 'prj_crash',
            ts: t0 + Math.floor(r() * 20 * DAY),
            path: `/p/${Math.floor(r() * 50)}`,
            visitor: BigInt(Math.floor(r() * 3000)),
            cls: r() < 0.7 ? CLASS_CODE.human : CLASS_CODE.ai,
            agent: null,
            referrer: null,
            source: SOURCE.import,
            importKey: BigInt(b * 2000 + i),
            group: 0,
          })),
        );
      }
      let engine = await ClickHouseEngine.open({ url: server.url('folio'), requestTimeoutMs: 5000 });
      for (const b of batches) await engine.write(b);
      const range = { from: t0 + 3 * DAY + 3_600_000, to: t0 + 15 * DAY };
      const before = {
        visitors: await engine.run(visitors, { projectId: 'prj_crash', range: { from: null, to: null }, limit: 100, offset: 0 }),
        partial: await engine.run(visitors, { projectId: 'prj_crash', range, limit: 100, offset: 0 }),
        views: await engine.run(views, { projectId: 'prj_crash', range: { from: null, to: null }, limit: 100, offset: 0 }),
        series: await engine.run(timeseries, { projectId: 'prj_crash', range, interval: 'hour' }),
      };
      expect(before.views.totals.total).toBe(12_000);

      await server.kill();
      const extra: StoredEvent = { ...batches[0][0], importKey: 999_999n, ts: t0 + 25 * DAY };
      await expect(engine.write([extra])).rejects.toThrow();
      await engine.close();

      await server.start();
      engine = await ClickHouseEngine.open({ url: server.url('folio'), requestTimeoutMs: 5000 });
      expect(await engine.run(visitors, { projectId: 'prj_crash', range: { from: null, to: null }, limit: 100, offset: 0 })).toEqual(before.visitors);
      expect(await engine.run(visitors, { projectId: 'prj_crash', range, limit: 100, offset: 0 })).toEqual(before.partial);
      expect(await engine.run(views, { projectId: 'prj_crash', range: { from: null, to: null }, limit: 100, offset: 0 })).toEqual(before.views);
      expect(await engine.run(timeseries, { projectId: 'prj_crash', range, interval: 'hour' })).toEqual(before.series);
      // Import keys survived too: re-sending everything stores nothing new; the failed event goes in once.
      const again = await engine.write([...batches.flat(), extra]);
      expect([...again.duplicates.values()].reduce((a, b) => a + b, 0)).toBe(12_000);
      expect((await engine.run(views, { projectId: 'prj_crash', range: { from: null, to: null }, limit: 1, offset: 0 })).totals.total).toBe(12_001);
      await engine.close();
    });
  },
);
