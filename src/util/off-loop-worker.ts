// The worker side of off-loop.ts: loads the task module and answers each message with its task's result.
import { parentPort, workerData } from 'node:worker_threads';

const { tasks } = (await import(workerData.module as string)) as { tasks: Record<string, (...args: unknown[]) => unknown> };

parentPort!.on('message', async (m: { id: number; name: string; args: unknown[] }) => {
  try {
    const task = Object.hasOwn(tasks, m.name) ? tasks[m.name] : null;
    if (!task) throw new Error(`No task named ${m.name}.`);
    parentPort!.postMessage({ id: m.id, ok: true, value: await task(...m.args) });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, ok: false, error: (err as Error)?.message ?? String(err) });
  }
});
