// The worker side of off-loop.ts: the pool's threads run this with a task module, a task name and
// its arguments; each module is loaded once per thread.
export default async function runTask({ module, name, args }: { module: string; name: string; args: unknown[] }): Promise<unknown> {
  const { tasks } = (await import(module)) as { tasks: Record<string, (...args: unknown[]) => unknown> };
  const task = Object.hasOwn(tasks, name) ? tasks[name] : null;
  if (!task) throw new Error(`No task named ${name}.`);
  return task(...args);
}
