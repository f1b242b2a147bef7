// The answers Folio owes on pull requests (store/review-replies.ts) in the real store, both backends:
// due only once their turn has ended, claimed by one process, a failed one rested before it is tried
// again, a dead process's claim taken over; and what a turn did, read from its message and events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { claimReply, dueReplies, queueReply, settleReply, turnReport } from '../../src/store/review-replies.ts';

describe('review answers in the store', () => {
  let server: TestServer;
  let projectId: string;
  let jobId: string;

  beforeAll(async () => {
    // No workers: the job's turn ends only when the test says so.
    server = await startTestServer({ workers: 0 });
    projectId = await server.createProject();
    const key = await server.createKey(projectId);
    const created = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Document --dry-run' } });
    expect(created.status).toBe(201);
    jobId = created.body.id;
  });
  afterAll(async () => {
    await server?.close();
  });

  const db = () => server.services.store.db;
  const reply = (seq: number | null, text: string | null) =>
    queueReply(db(), { project_id: projectId, job_id: jobId, seq, text, host: 'github', repository_url: 'https://github.com/acme/docs', pr_number: 1, target: JSON.stringify({ kind: 'pull_request' }) });
  const due = async () => (await dueReplies(db(), 100)).map((r) => r.id);

  it('an answer waiting for a turn is due once the turn has ended; one with its text at once', async () => {
    const waiting = await reply(1, null);
    const now = await reply(null, 'The pull request is merged.');
    expect(await due()).toEqual([now]);
    await db().updateTable('job_messages').set({ handled_at: Date.now(), outcome: 'completed', title: 'Document it', summary: 'Done.' }).where('job_id', '=', jobId).where('seq', '=', 1).execute();
    expect(await due()).toEqual([waiting, now]);
    for (const id of [waiting, now]) await settleReply(db(), id, 'sent', null);
    expect(await due()).toEqual([]);
  });

  it('is claimed once; a failed answer rests before it is tried again; a stale claim is taken over', async () => {
    const id = await reply(null, 'x');
    const [row] = await dueReplies(db(), 100);
    expect(await claimReply(db(), row)).toBe(true);
    expect(await claimReply(db(), row)).toBe(false);
    expect(await due()).toEqual([]);
    await settleReply(db(), id, 'pending', 'GitHub answering on the pull request failed (HTTP 502): Bad gateway');
    expect(await due()).toEqual([]);
    await db().updateTable('review_replies').set({ answered_at: Date.now() - 31_000 }).where('id', '=', id).execute();
    const [again] = await dueReplies(db(), 100);
    expect(again).toMatchObject({ id, attempts: 1, error: 'GitHub answering on the pull request failed (HTTP 502): Bad gateway' });
    expect(await claimReply(db(), again)).toBe(true);
    // The process died while sending: after five minutes another one takes it over.
    await db().updateTable('review_replies').set({ answered_at: Date.now() - 6 * 60_000 }).where('id', '=', id).execute();
    const [stale] = await dueReplies(db(), 100);
    expect(stale).toMatchObject({ id, state: 'sending', attempts: 2 });
    expect(await claimReply(db(), stale)).toBe(true);
    await settleReply(db(), id, 'sent', null);
  });

  it("reads what a turn did: the commit it pushed, or its error, never another turn's commit", async () => {
    const { jobs } = server.services;
    await jobs.event(jobId, 'push', { branch: `folio/${jobId}`, sha: 'a'.repeat(40) });
    await jobs.event(jobId, 'turn.completed', { seq: 1, title: 'Document it', summary: 'Done.', prLink: null });
    await jobs.event(jobId, 'error', { seq: 2, code: 'model_error', message: 'The model is unavailable.' });
    await jobs.event(jobId, 'turn.completed', { seq: 3, title: 'Nothing', summary: 'Out of scope.', prLink: null });
    expect(await turnReport(db(), jobId, 1)).toMatchObject({ outcome: 'completed', title: 'Document it', sha: 'a'.repeat(40), error: null });
    expect(await turnReport(db(), jobId, 2)).toMatchObject({ sha: null, error: 'The model is unavailable.' });
    expect(await turnReport(db(), jobId, 3)).toMatchObject({ sha: null, error: null });
  });
});
