// A suggestion job's prompt ends in its context as JSON, for the agent (src/suggestions/proposals.ts):
// split off here so the job's page shows people a table, with the JSON behind a disclosure. Any job's
// prompt can end like that (people write prompts too), so only numbers and strings reach the table.

const CONTEXT = /\n*Context \(JSON\):\n```json\n([\s\S]*?)\n```\s*$/;

export interface ContextPath {
  path: string;
  human: number | null;
  ai: number | null;
  total: number | null;
  /** The likely pages' addresses (or files). */
  likely: string[];
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** One element of the context as a row, or null when it is not a path with its visitors. */
function contextPath(v: unknown): ContextPath | null {
  if (!isObject(v) || typeof v.path !== 'string') return null;
  const visitors = isObject(v.visitors) ? v.visitors : {};
  const candidates = Array.isArray(v.candidates) ? v.candidates.filter(isObject) : [];
  const likely = candidates.map((c) => c.url ?? c.file).filter((s): s is string => typeof s === 'string');
  return { path: v.path, human: num(visitors.human), ai: num(visitors.ai), total: num(visitors.total), likely };
}

/** The prompt's words and its JSON context: rows when the JSON is a list of paths, else null. */
export function splitContext(prompt: string): { text: string; context: ContextPath[] | null; json: string | null } {
  const m = CONTEXT.exec(prompt);
  if (!m) return { text: prompt, context: null, json: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(m[1]);
  } catch {
    return { text: prompt, context: null, json: null };
  }
  const rows = Array.isArray(parsed) ? parsed.map(contextPath) : null;
  const context = rows && rows.length > 0 && rows.every((r) => r !== null) ? (rows as ContextPath[]) : null;
  return { text: prompt.slice(0, m.index), context, json: JSON.stringify(parsed, null, 2) };
}
