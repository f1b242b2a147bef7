// Schemas shared by every area: the error body, path parameters, the code hosts and trigger hosts.
import { Type, type Static } from 'typebox';

/**
 * A guide named in an OpenAPI text, as a Markdown link to where every Folio server serves it
 * (GET /docs/guides/<name>.md, src/http/routes/guides.ts): `docLink('errors')`.
 */
export const docLink = (name: string): string => `[docs/${name}.md](/docs/guides/${name}.md)`;

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'One clear sentence about what went wrong.' }),
    code: Type.String({ description: `Stable machine-readable code; see ${docLink('errors')}.` }),
    details: Type.Optional(
      Type.Array(
        Type.Object({
          message: Type.String(),
          path: Type.Optional(Type.String({ description: 'JSON pointer of the offending input, e.g. /body/prompt.' })),
        }),
      ),
    ),
  },
  { $id: 'Error', title: 'Error' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const ProjectId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'The project identifier, shown on the API keys page of the dashboard and by `folio project list`.',
});

export const ProjectParams = Type.Object({ projectId: ProjectId });

/** The largest event id or sequence number the API takes: every number a client sends is bounded. */
export const MAX_SEQUENCE = 2_147_483_647;

/** Response map entry for error statuses. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')])) as Record<number, ReturnType<typeof Type.Ref>>;

/**
 * The code hosts Folio knows, stated once (codehost/kinds.ts declares each one's details, and a kind
 * without them does not compile).
 */
export const CodeHost = Type.Union([Type.Literal('github'), Type.Literal('gitlab'), Type.Literal('none')]);
export type CodeHostKind = Static<typeof CodeHost>;
export const CODE_HOST_KINDS: readonly CodeHostKind[] = CodeHost.anyOf.map((s) => s.const);

/** The code hosts whose webhooks start jobs, stated once: schemas, the store's column type and the receiver derive from it. */
export const TriggerHost = Type.Union([Type.Literal('github'), Type.Literal('gitlab')]);
export type TriggerHost = Static<typeof TriggerHost>;
export const TRIGGER_HOSTS: readonly TriggerHost[] = TriggerHost.anyOf.map((s) => s.const);

/** Docs checks before each push: `strict` fails a job that leaves problems, `warn` lists them in the PR, `off` skips them. */
export const CHECKS_MODES = ['strict', 'warn', 'off'] as const;
export type ChecksMode = (typeof CHECKS_MODES)[number];
export const ChecksModeSchema = Type.Enum(CHECKS_MODES, { description: 'strict: problems fail the job; warn: they are listed in the pull request; off: no checks.' });

/**
 * The docs checks, stated once: internal links, anchors into pages, images and files, navigation,
 * redirects, llms.txt, the scope of a suggestion job, and the site's own build.
 */
export const CHECK_NAMES = ['links', 'anchors', 'assets', 'navigation', 'redirects', 'llms-txt', 'scope', 'build'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];
export const CheckNameSchema = Type.Enum(CHECK_NAMES);
