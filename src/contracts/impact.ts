// The effect of a merged job on its pages: `GET /v2/agent/{projectId}/job/{id}/impact`. Equal windows
// before and after the merge of the job's pull request, exact distinct counts as every other count.
import { Type, type Static } from 'typebox';

export const ImpactQuery = Type.Object({
  days: Type.Integer({
    minimum: 1,
    maximum: 90,
    default: 14,
    description: 'Length of each window in days (1–90, default 14). Clipped to the time since the merge and to the data there is; the answer says so.',
  }),
});
export type ImpactQuery = Static<typeof ImpactQuery>;

export const ImpactCounts = Type.Object(
  {
    humans: Type.Integer({ minimum: 0, description: 'Distinct human visitors.' }),
    ai: Type.Integer({ minimum: 0, description: 'Distinct AI visitors (assistants, coding agents, Markdown readers).' }),
    views: Type.Integer({ minimum: 0, description: 'Page views by humans and AI visitors (crawlers left out).' }),
    fromAiAnswers: Type.Integer({ minimum: 0, description: "Distinct humans who arrived from an AI assistant's answer." }),
    notFound: Type.Integer({ minimum: 0, description: 'Distinct visitors who got a not-found answer on the old addresses (a moved or removed page, a redirect source).' }),
  },
  { description: 'Counts of one window, exact.' },
);
export type ImpactCounts = Static<typeof ImpactCounts>;

export const ImpactChange = Type.Union([Type.Literal('added'), Type.Literal('edited'), Type.Literal('moved'), Type.Literal('removed'), Type.Literal('redirect')]);
export type ImpactChange = Static<typeof ImpactChange>;

const When = Type.Object({ from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time', description: 'Exclusive.' }) });

export const ImpactPage = Type.Object({
  change: ImpactChange,
  /** Site path after the merge (a removed page: its old address; a redirect: its source). */
  path: Type.String({ description: "The page's site path after the merge (a removed page: its old path; an added redirect: its source)." }),
  previousPath: Type.Union([Type.String(), Type.Null()], { description: 'The old site path of a moved page, else null.' }),
  file: Type.Union([Type.String(), Type.Null()], { description: 'The repository file (null for a redirect).' }),
  redirectTo: Type.Union([Type.String(), Type.Null()], { description: 'An added redirect: its destination, else null.' }),
  before: ImpactCounts,
  after: ImpactCounts,
});
export type ImpactPage = Static<typeof ImpactPage>;

export const JobImpact = Type.Object(
  {
    jobId: Type.String(),
    pullRequest: Type.Object({ url: Type.Union([Type.String(), Type.Null()]), mergedAt: Type.String({ format: 'date-time' }) }),
    days: Type.Integer({ description: 'The window length asked for.' }),
    windowDays: Type.Number({ description: 'The window length used (whole UTC days): less than `days` when clipped.' }),
    clipped: Type.Union([Type.String(), Type.Null()], { description: 'Why the windows are shorter than asked (merged recently, data starts later), else null.' }),
    before: When,
    after: When,
    total: Type.Object({ before: ImpactCounts, after: ImpactCounts }, { description: 'All touched pages together, visitors deduplicated across them.' }),
    pages: Type.Array(ImpactPage, { description: 'Pages the job added, edited, moved or removed, and redirects it added.' }),
  },
  { description: "The effect of a merged job on the pages it touched: equal windows before and after its pull request's merge." },
);
export type JobImpact = Static<typeof JobImpact>;
