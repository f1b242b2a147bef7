// The repository's own guides (docs/*.md), served read-only at /docs/guides/<name>.md so the links
// of the API reference (docLink in contracts/common.ts) work on every Folio server, image included.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CodedError } from '../../errors.ts';
import { ACCESS } from '../auth.ts';

export const DEFAULT_DOCS_ROOT = fileURLToPath(new URL('../../../docs/', import.meta.url));
const GUIDE_NAME = /^[a-z0-9-]+\.md$/;

/** The guides present at start, name → file: a request's value is only ever a key of this map. */
function listGuides(docsRoot: string): Map<string, string> {
  let names: string[] = [];
  try {
    names = readdirSync(docsRoot, { withFileTypes: true }).filter((e) => e.isFile() && GUIDE_NAME.test(e.name)).map((e) => e.name);
  } catch {
    // No docs folder (a trimmed install): every guide is a 404, the server still starts.
  }
  return new Map(names.map((name) => [name, path.join(docsRoot, name)]));
}

/** GET /docs/guides/:name: one of the listed guides as text/markdown, else 404 `doc_not_found`. */
export const guideRoutes: FastifyPluginAsyncTypebox<{ docsRoot?: string }> = async (app, opts) => {
  const guides = listGuides(opts.docsRoot ?? DEFAULT_DOCS_ROOT);
  app.get(
    '/docs/guides/:name',
    { schema: { hide: true, params: Type.Object({ name: Type.String() }) }, config: ACCESS.public },
    async (request, reply) => {
      const file = guides.get(request.params.name);
      if (!file) throw new CodedError('doc_not_found', `There is no guide ${JSON.stringify(request.params.name.slice(0, 100))}; the guides are docs/<name>.md of Folio's repository.`);
      return reply.header('content-type', 'text/markdown; charset=utf-8').header('cache-control', 'public, max-age=300').send(readFileSync(file, 'utf8'));
    },
  );
};
