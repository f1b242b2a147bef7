// The Markdown/MDX parsing that the checks and the validation step do on text from the repository
// and the model, run off the server's thread with a time limit (util/off-loop.ts): micromark's
// emphasis and bracket handling is quadratic (50,000 `*a` pairs take ~26 s), so a hostile page must
// cost a pool thread at most PARSE_TIMEOUT_MS, never the event loop. The worker runs parse-tasks.ts.
import { OffLoop, OffLoopTimeoutError } from '../util/off-loop.ts';
import type { ParsedPage } from './checks/markdown.ts';
import type { tasks } from './parse-tasks.ts';

/** Time one page may take to parse; a normal 1 MB page takes about 4 s on a slow machine. */
export const PARSE_TIMEOUT_MS = 10_000;

const offLoop = new OffLoop<typeof tasks>(new URL('./parse-tasks.ts', import.meta.url), { timeoutMs: PARSE_TIMEOUT_MS });

/** parsePage on the worker; a page over the time limit reads as unparsed (`truncated`, nothing found). */
export async function parsePageOffLoop(text: string, format: 'mdx' | 'md'): Promise<ParsedPage> {
  try {
    return await offLoop.run('parsePage', text, format);
  } catch (err) {
    if (err instanceof OffLoopTimeoutError) return { links: [], headings: [], ids: [], frontMatter: {}, truncated: true };
    throw err;
  }
}

/** checkMdx on the worker; a document over the time limit is a problem to fix like a parse error. */
export async function checkMdxOffLoop(text: string, format: 'mdx' | 'md', opts: { headingIds?: boolean }): Promise<string[]> {
  try {
    return await offLoop.run('checkMdx', text, format, opts);
  } catch (err) {
    if (err instanceof OffLoopTimeoutError) {
      return [`The file took longer than ${PARSE_TIMEOUT_MS / 1000} s to parse; simplify it (very long runs of emphasis markers or brackets are slow to parse).`];
    }
    throw err;
  }
}
