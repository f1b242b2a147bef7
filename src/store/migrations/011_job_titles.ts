// Jobs get a short title (contracts/job-title.ts): the first line of the prompt, replaced by the
// pull request's title once the agent opens one. Existing jobs take it from what is stored: the
// first turn the agent titled if the job has a pull request, else the prompt.
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';
import { jobTitle } from '../../contracts/job-title.ts';

interface Row {
  id: string;
  pr_link: string | null;
  seq: number;
  prompt: string;
  title: string | null;
}

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('title', 'text', (c) => c.notNull().defaultTo('')).execute();
  const rows = (await (db as Kysely<any>)
    .selectFrom('jobs')
    .innerJoin('job_messages', 'job_messages.job_id', 'jobs.id')
    .select(['jobs.id as id', 'jobs.pr_link as pr_link', 'job_messages.seq as seq', 'job_messages.prompt as prompt', 'job_messages.title as title'])
    .orderBy('jobs.id')
    .orderBy('job_messages.seq')
    .execute()) as Row[];
  const titles = new Map<string, string>();
  for (const r of rows) {
    if (Number(r.seq) === 1) titles.set(r.id, jobTitle(r.prompt));
    const first = titles.get(`pr:${r.id}`);
    if (r.pr_link !== null && r.title && first === undefined) titles.set(`pr:${r.id}`, jobTitle(r.title));
  }
  for (const [key, title] of titles) {
    if (key.startsWith('pr:')) continue;
    await (db as Kysely<any>).updateTable('jobs').set({ title: titles.get(`pr:${key}`) ?? title }).where('id', '=', key).execute();
  }
}
