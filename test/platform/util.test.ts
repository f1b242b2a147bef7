// The shared helpers: the serial queues (one, and one per key), one retry policy and the bounded memos.
import { describe, expect, it } from 'vitest';
import { KeyedSerial, Serial } from '../../src/util/serial.ts';
import { backoffDelay, retrying } from '../../src/util/retry.ts';
import { Memo, PairMemo } from '../../src/util/memo.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('KeyedSerial', () => {
  it('runs tasks of one key one at a time in order, other keys alongside, and goes on after a failure', async () => {
    const serial = new KeyedSerial();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task = (name: string, fail = false) => async () => {
      running++;
      most = Math.max(most, running);
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([serial.run('a', task('a1')), serial.run('a', task('a2', true)), serial.run('a', task('a3')), serial.run('b', task('b1'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const a = log.filter((l) => l.endsWith('a1') || l.endsWith('a2') || l.endsWith('a3'));
    expect(a).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
    expect(most).toBe(2); // a and b at once, never two of a
    await tick();
    expect(serial.size).toBe(0);
  });
});

describe('Serial', () => {
  it('runs tasks one at a time in order, goes on after a failure, and says when all have finished', async () => {
    const serial = new Serial();
    const log: string[] = [];
    const task = (name: string, fail = false) => async () => {
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = Promise.allSettled([serial.run(task('1')), serial.run(task('2', true)), serial.run(task('3'))]);
    await serial.idle();
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    expect((await results).map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});

describe('retry', () => {
  it('doubles the delay up to its cap, and jitters within ±25%', () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffDelay(n, { baseMs: 100, maxMs: 500 }))).toEqual([100, 200, 400, 500, 500]);
    for (let i = 0; i < 50; i++) {
      const d = backoffDelay(2, { baseMs: 100, maxMs: 1000, jitter: true });
      expect(d).toBeGreaterThanOrEqual(150);
      expect(d).toBeLessThanOrEqual(250);
    }
  });

  it('retries only retryable errors, at most the attempts given', async () => {
    let calls = 0;
    await expect(retrying(async () => (++calls < 3 ? Promise.reject(new Error('busy')) : 'ok'), { attempts: 5, retryable: () => true })).resolves.toBe('ok');
    expect(calls).toBe(3);
    calls = 0;
    await expect(retrying(async () => Promise.reject(new Error(`busy ${++calls}`)), { attempts: 4, retryable: () => true })).rejects.toThrow('busy 4');
    calls = 0;
    await expect(retrying(async () => Promise.reject(new Error(`fatal ${++calls}`)), { attempts: 4, retryable: (e) => !String(e).includes('fatal') })).rejects.toThrow('fatal 1');
  });

  it('waits the longer of the backoff and what the failure asks for, never past the deadline, and says so first', async () => {
    const told: { attempt: number; delayMs: number }[] = [];
    let calls = 0;
    const policy = {
      attempts: 3,
      retryable: () => true,
      delay: { baseMs: 1, maxMs: 5 },
      onRetry: ({ attempt, delayMs }: { attempt: number; delayMs: number }) => void told.push({ attempt, delayMs }),
    };
    await expect(retrying(async () => Promise.reject(new Error(`busy ${++calls}`)), { ...policy, asked: () => 20 })).rejects.toThrow('busy 3');
    expect(told).toEqual([{ attempt: 1, delayMs: 20 }, { attempt: 2, delayMs: 20 }]);
    told.length = 0;
    await expect(retrying(async () => Promise.reject(new Error('busy')), { ...policy, asked: () => 60_000, deadline: Date.now() - 1 })).rejects.toThrow('busy');
    expect(told.map((t) => t.delayMs)).toEqual([0, 0]);
  });

  it('stops waiting when its signal aborts', async () => {
    const controller = new AbortController();
    const run = retrying(async () => Promise.reject(new Error('busy')), { attempts: 5, retryable: () => true, delay: { baseMs: 60_000, maxMs: 60_000 }, signal: controller.signal, onRetry: () => controller.abort(new Error('stopped')) });
    await expect(run).rejects.toThrow();
    expect(controller.signal.aborted).toBe(true);
  });
});

describe('Memo and PairMemo', () => {
  it('Memo keeps entries in use through turnovers, forgets unused ones and holds at most max', () => {
    const m = new Memo<string, number>(4);
    m.set('hot', 0);
    for (let i = 1; i <= 100; i++) {
      m.set(`k${i}`, i);
      expect(m.get('hot'), `after ${i} sets`).toBe(0);
      expect(m.size).toBeLessThanOrEqual(4);
    }
    expect(m.get('k100')).toBe(100);
    expect(m.get('k1')).toBeUndefined();
    m.clear();
    expect(m.get('hot')).toBeUndefined();
  });

  it('PairMemo counts entries across its inner maps', () => {
    const m = new PairMemo<string, string, number>(6);
    m.set('ua', 'hot', 0);
    for (let i = 1; i <= 200; i++) {
      m.set(`ua${i % 3}`, `ip${i}`, i);
      expect(m.get('ua', 'hot'), `after ${i} sets`).toBe(0);
      expect(m.size).toBeLessThanOrEqual(6);
    }
    expect(m.get('ua2', 'ip200')).toBe(200);
    expect(m.get('ua1', 'ip1')).toBeUndefined();
    expect(m.get('ua1', 'ip200')).toBeUndefined();
  });

  it('PairMemo also bounds the distinct first keys (each holds an inner Map)', () => {
    const m = new PairMemo<string, string, number>(1000, 4);
    m.set('hot', 'ip', 0);
    for (let i = 1; i <= 100; i++) {
      m.set(`${'x'.repeat(1000)}${i}`, 'ip', i);
      expect(m.get('hot', 'ip'), `after ${i} user agents`).toBe(0);
      expect(m.outerSize).toBeLessThanOrEqual(4);
    }
  });
});
