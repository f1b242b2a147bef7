import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/git/coalesce.ts';

/** Work that records when it ran and finishes when told to. */
function gate() {
  const calls: { signal: AbortSignal; finish: (err?: Error) => void }[] = [];
  const work = (signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ signal, finish: (err) => (err ? reject(err) : resolve()) });
      signal.addEventListener('abort', () => reject(new Error('killed')), { once: true });
    });
  return { calls, work };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('Coalescer', () => {
  it('runs a round at once, and lets every later caller share the next round that starts after it', async () => {
    const c = new Coalescer();
    const { calls, work } = gate();
    const a = c.run('k', work);
    await tick();
    expect(calls).toHaveLength(1);
    const later = [c.run('k', work), c.run('k', work), c.run('k', work)];
    await tick();
    expect(calls).toHaveLength(1); // waits for the running round
    calls[0].finish();
    await a;
    await tick();
    expect(calls).toHaveLength(2);
    calls[1].finish();
    await Promise.all(later);
    expect(c.rounds.get('k')).toBe(2);
    // Other keys are independent.
    const other = c.run('other', work);
    await tick();
    expect(calls).toHaveLength(3);
    calls[2].finish();
    await other;
  });

  it('gives every waiter of a round its error', async () => {
    const c = new Coalescer();
    const { calls, work } = gate();
    const first = c.run('k', work);
    const [x, y] = [c.run('k', work), c.run('k', work)];
    await tick();
    calls[0].finish();
    await first;
    await tick();
    calls[1].finish(new Error('fetch failed'));
    await expect(x).rejects.toThrow('fetch failed');
    await expect(y).rejects.toThrow('fetch failed');
  });

  it('lets an aborted caller go at once, and stops a round nobody waits for', async () => {
    const c = new Coalescer();
    const { calls, work } = gate();
    const ca = new AbortController();
    const a = c.run('k', work, ca.signal);
    await tick();
    ca.abort('archived');
    await expect(a).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls[0].signal.aborted).toBe(true); // nobody else waited: its process is stopped
  });

  it('drops a queued round whose callers all left, and starts a new one for the next caller', async () => {
    const c = new Coalescer();
    const { calls, work } = gate();
    const a = c.run('k', work);
    const cb = new AbortController();
    const b = c.run('k', work, cb.signal); // queued behind a's round
    await tick();
    cb.abort('archived');
    await expect(b).rejects.toMatchObject({ name: 'AbortError' });
    calls[0].finish();
    await a;
    await tick();
    expect(calls).toHaveLength(1); // the queued round never ran
    const d = c.run('k', work);
    await tick();
    expect(calls).toHaveLength(2);
    calls[1].finish();
    await d;
    expect(c.rounds.get('k')).toBe(2);
  });

  it('keeps a shared round running while one of its callers aborts', async () => {
    const c = new Coalescer();
    const { calls, work } = gate();
    const ca = new AbortController();
    const a = c.run('k', work, ca.signal);
    const b = c.run('k', work); // queued behind a's round
    const cc = c.run('k', work); // shares b's round
    await tick();
    calls[0].finish();
    await a;
    await tick();
    const cx = new AbortController();
    const x = c.run('k', work, cx.signal); // queued behind the running round of b and cc
    cx.abort();
    await expect(x).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls[1].signal.aborted).toBe(false);
    calls[1].finish();
    await Promise.all([b, cc]);
    await expect(c.run('k', work, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });
});
