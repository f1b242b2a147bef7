// A Folio server with the data a docs team would have after a month: 30 days of visits by humans,
// AI answers and crawlers over several pages and referrers (a few pages not found among them), and
// agent jobs in every state, run by the real agent with a scripted model on a local code host.
// The screenshots (scripts/screenshots.ts) and the layout tests (test/e2e/layout.test.ts) use it.
import { startE2E, waitForJob, type E2E } from '../agent/e2e-helpers.ts';
import type { ChatRequest, FakeReply } from '../fixtures/fake-openai.ts';
import type { Page } from 'playwright-core';
import { OWNER, setUp } from '../dashboard/session.ts';

export interface Realistic {
  e: E2E;
  projectId: string;
  key: string;
  /** Job ids by state. */
  jobs: { completed: string; checked: string; failed: string; running: string; archived: string };
  /** Page views and distinct visitors sent. */
  events: number;
  close(): Promise<void>;
}

export { OWNER, setUp };

const DOCS: Record<string, string> = {
  'docs.json': JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages: ['index', 'install', 'quickstart'] }, { group: 'Reference', pages: ['cli', 'api/auth'] }] }, null, 2) + '\n',
  'index.mdx': '---\ntitle: Acme CLI\ndescription: Build and ship docs sites\n---\n\n# Acme CLI\n\nRun `acme build` to build the site.\n',
  'install.mdx': '---\ntitle: Install\n---\n\n# Install\n\n```sh\nnpm install -g acme-cli\n```\n',
  'quickstart.mdx': '---\ntitle: Quickstart\n---\n\n# Quickstart\n\n1. `acme init`\n2. `acme build`\n3. `acme deploy`\n',
  'cli.mdx': '---\ntitle: CLI reference\n---\n\n# CLI reference\n\n## acme build\n\nBuilds the site into `dist/`.\n\n## acme deploy\n\nUploads `dist/`.\n',
  'api/auth.mdx': '---\ntitle: Authentication\n---\n\n# Authentication\n\nSend your key as a bearer token.\n',
};

/** Each job's script, step by step, chosen by a word of its prompt (the model sees the prompt first). */
const SCRIPTS: [RegExp, FakeReply[]][] = [
  [
    /--dry-run/,
    [
      step('read_file', { path: 'cli.mdx' }, 2100, 90),
      step('edit_file', { path: 'cli.mdx', old_string: 'Uploads `dist/`.', new_string: 'Uploads `dist/`.\n\nAdd `--dry-run` to list what would be uploaded without uploading it.' }, 3400, 160),
      step('finish', { title: 'Document the --dry-run flag of acme deploy', summary: 'Added --dry-run to the CLI reference with what it prints.' }, 3900, 120),
    ],
  ],
  [
    /rate limits/,
    [
      step('write_file', { path: 'guides/limits.mdx', content: '---\ntitle: Rate limits\n---\n\n## Per key\n\nSee [the limits API](/api/limits).\n' }, 2600, 240),
      step('finish', { title: 'Add a rate limits guide', summary: 'New guide page on rate limits per key.' }, 3100, 110),
    ],
  ],
  [/Windows/, [{ status: 400, error: 'This model does not support tools' }]],
  [/changelog/, [step('read_file', { path: 'index.mdx' }, 1800, 60), { hang: true }]],
  [
    /typo/,
    [
      step('edit_file', { path: 'install.mdx', old_string: '# Install', new_string: '# Installation' }, 1500, 70),
      step('finish', { title: 'Fix the install heading', summary: 'Renamed the heading.' }, 1700, 50),
    ],
  ],
];

function step(name: string, args: Record<string, unknown>, prompt: number, completion: number): FakeReply {
  return { toolCalls: [{ name, args }], usage: { prompt, completion } };
}

/** The script of the job a request belongs to, at the step its conversation has reached. */
function scripted(req: ChatRequest): FakeReply {
  const text = JSON.stringify(req.messages.filter((m) => m.role === 'user').slice(0, 1));
  const script = SCRIPTS.find(([pattern]) => pattern.test(text))?.[1] ?? [];
  const steps = req.messages.filter((m) => m.role === 'assistant').length;
  // Past its script (the checks asked again), a job finishes as its script did.
  const last = script.at(-1);
  const finish = last && 'toolCalls' in last && last.toolCalls[0]?.name === 'finish' ? last : step('finish', { title: 'Done', summary: 'Nothing more to do.' }, 900, 40);
  return script[steps] ?? finish;
}

export async function startRealistic(opts: { setup?: boolean } = {}): Promise<Realistic> {
  const e = await startE2E({ FOLIO_RATE_LIMIT_ANALYTICS: '0', FOLIO_MODEL_PRICES: 'openai-compatible/test-model=3:15' });
  e.llm.setResponder(scripted);
  if (opts.setup !== false) await setUp(e.server);
  const repo = e.host.createRepo('acme/docs', DOCS);
  const projectId = await e.server.createProject({ name: 'Acme docs', repositoryUrl: repo, codeHost: 'github' });
  const key = await e.server.createKey(projectId, 'write');
  await e.server.createKey(projectId, 'read', Date.now() + 90 * 86_400_000);
  const events = await sendVisits(e, projectId, key);
  const jobs = await startJobs(e, projectId, key);
  return { e, projectId, key, jobs, events, close: () => e.close() };
}

async function startJobs(e: E2E, projectId: string, key: string): Promise<Realistic['jobs']> {
  const create = async (prompt: string) => {
    const res = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt } });
    if (res.status !== 201) throw new Error(`job not created: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  // One at a time: each script is found by its prompt, and the list's order is the creation order.
  const archived = await create('Fix the typo in the install page heading');
  await waitForJob(e.server, projectId, archived, key, undefined, 60_000);
  await e.server.api('POST', `/v2/agent/${projectId}/job/${archived}/archive`, { key });
  const failed = await create('Add a Windows section to the install page\n\nPowerShell users ask for it.');
  await waitForJob(e.server, projectId, failed, key, undefined, 60_000);
  const checked = await create('Write a guide about rate limits per key');
  await waitForJob(e.server, projectId, checked, key, undefined, 60_000);
  const completed = await create('Document the new --dry-run flag of `acme deploy`: what it prints, and that it uploads nothing. Users keep asking in the forum whether it is safe to run against production.');
  await waitForJob(e.server, projectId, completed, key, undefined, 60_000);
  const running = await create('Summarise the changelog of version 2.4 on the home page');
  await waitForJob(e.server, projectId, running, key, (j: any) => j.usage.totalTokens > 0, 60_000);
  return { completed, checked, failed, running, archived };
}

const HUMANS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
];
const AI = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  'Claude-User/1.0 (+Claude-User@anthropic.com)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
];
const CRAWLERS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
];
const PAGES = ['/docs', '/docs/install', '/docs/quickstart', '/docs/cli', '/docs/api/auth', '/docs/guides/deploy', '/docs/guides/limits', '/llms.txt'];
const REFERRERS = ['https://www.google.com/', 'https://chatgpt.com/', 'https://www.perplexity.ai/', 'https://github.com/acme/cli', 'https://news.ycombinator.com/', 'https://duckduckgo.com/', '', '', ''];
const MISSING = ['/docs/old-install', '/docs/v1/cli', '/docs/getting-started'];

/** A small deterministic generator: the same month every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
}

/** Thirty days of visits, more on weekdays and growing, sent 1,000 events a request. */
async function sendVisits(e: E2E, projectId: string, key: string): Promise<number> {
  const rnd = random(42);
  const pick = <T>(list: T[]) => list[Math.floor(rnd() * list.length)]!;
  const now = Date.now();
  const events: Record<string, unknown>[] = [];
  for (let day = 29; day >= 0; day--) {
    const start = now - (day + 1) * 86_400_000;
    const weekday = new Date(start).getUTCDay() % 6 !== 0;
    const humans = Math.round((weekday ? 90 : 40) * (1 + (29 - day) / 40));
    const visit = (ua: string, visitor: string, views: number) => {
      for (let v = 0; v < views; v++) {
        const path = rnd() < 0.03 ? pick(MISSING) : pick(PAGES);
        events.push({
          timestamp: new Date(start + Math.floor(rnd() * 86_000_000)).toISOString(),
          path,
          userAgent: ua,
          visitorId: visitor,
          ...(v === 0 && pick(REFERRERS) ? { referrer: pick(REFERRERS) } : {}),
          ...(MISSING.includes(path) ? { status: 404 } : {}),
        });
      }
    };
    for (let h = 0; h < humans; h++) visit(pick(HUMANS), `h-${day}-${h % (humans - 10)}`, 1 + Math.floor(rnd() * 3));
    for (let a = 0; a < Math.round(humans * 0.35); a++) visit(pick(AI), `a-${day}-${a}`, 1 + Math.floor(rnd() * 2));
    for (let c = 0; c < 12; c++) visit(pick(CRAWLERS), `c-${day}-${c}`, 2);
  }
  for (let i = 0; i < events.length; i += 1000) {
    const res = await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events: events.slice(i, i + 1000) } });
    if (res.status !== 202 || res.body.rejected.length) throw new Error(`events refused: ${res.status} ${res.text.slice(0, 500)}`);
  }
  return events.length;
}

/** A page of the dashboard: its name (the screenshot's), its address, and what shows it has loaded. */
export interface DashboardPage {
  name: string;
  path: string;
  ready(page: Page): Promise<unknown>;
}

/** Every page a signed-in user sees, with the seeded data. */
export function dashboardPages(r: Pick<Realistic, 'projectId' | 'jobs'>): DashboardPage[] {
  const p = `/projects/${r.projectId}`;
  const job = (name: string, id: string, state: string): DashboardPage => ({
    name,
    path: `${p}/jobs/${id}`,
    ready: (page) => Promise.all([page.getByTestId('checks').waitFor(), page.getByTestId('diff').waitFor(), page.getByTestId('stream-state').filter({ hasText: state }).waitFor()]),
  });
  return [
    { name: 'projects', path: '/projects', ready: (page) => page.getByRole('link', { name: 'Acme docs' }).waitFor() },
    { name: 'jobs', path: `${p}/jobs`, ready: (page) => page.getByRole('link', { name: 'Document the --dry-run flag of acme deploy' }).waitFor() },
    job('job', r.jobs.completed, 'Finished'),
    job('job-changes', r.jobs.checked, 'Finished'),
    job('job-failed', r.jobs.failed, 'Finished'),
    job('job-running', r.jobs.running, 'Live'),
    { name: 'analytics', path: `${p}/analytics`, ready: (page) => page.locator('canvas').waitFor() },
    { name: 'insights', path: `${p}/insights`, ready: (page) => page.getByRole('region', { name: 'Pages not found' }).getByRole('row').nth(1).waitFor() },
    { name: 'usage', path: `${p}/usage`, ready: (page) => page.getByTestId('usage-total-tokens').waitFor() },
    { name: 'api-keys', path: `${p}/keys`, ready: (page) => page.getByRole('table').getByRole('row').nth(1).waitFor() },
    { name: 'settings', path: `${p}/settings`, ready: (page) => Promise.all([page.getByLabel('Webhook URL').waitFor(), page.getByRole('heading', { name: 'Code-change triggers' }).waitFor()]) },
  ];
}

/** A signed-out page: first-run setup (before the owner exists) or sign-in. */
export const SIGNED_OUT_PAGES = {
  setup: { path: '/setup', ready: (page: Page) => page.getByRole('heading', { name: 'Welcome to Folio' }).waitFor() },
  'sign-in': { path: '/login', ready: (page: Page) => page.getByRole('heading', { name: 'Sign in to Folio' }).waitFor() },
};

/** Whether the page is wider than the window (a sideways page scroll). */
export const overflows = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

export const WIDTHS = [
  ['desktop', 1280, 860],
  ['phone', 390, 844],
] as const;
