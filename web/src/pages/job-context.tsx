// A job's prompt on its page. A suggestion's prompt ends in its context as JSON (for the agent): people
// read it as a table of paths, visitors and likely pages, with the JSON itself behind a disclosure.
import { PathCell, Table, type Column } from '../tables.tsx';

const CONTEXT = /\n*Context \(JSON\):\n```json\n([\s\S]*?)\n```\s*$/;

interface ContextPath {
  path: string;
  visitors?: { human?: number; ai?: number; total?: number };
  candidates?: { url?: string; file?: string }[];
}

/** The prompt's words and its JSON context, or null for the context when there is none or it is not a list of paths. */
export function splitContext(prompt: string): { text: string; context: ContextPath[] | null; json: string | null } {
  const m = CONTEXT.exec(prompt);
  if (!m) return { text: prompt, context: null, json: null };
  try {
    const parsed: unknown = JSON.parse(m[1]);
    const rows = Array.isArray(parsed) && parsed.every((r) => typeof r?.path === 'string') ? (parsed as ContextPath[]) : null;
    return { text: prompt.slice(0, m.index), context: rows, json: JSON.stringify(parsed, null, 2) };
  } catch {
    return { text: prompt, context: null, json: null };
  }
}

const wide = (label: string): Column => ({ label, className: 'wide-only' });
const likely = (c: ContextPath) => (c.candidates?.length ? c.candidates.map((x) => x.url ?? x.file).join(', ') : '—');

export function PromptText({ prompt }: { prompt: string }) {
  const { text, context, json } = splitContext(prompt);
  return (
    <>
      <p className="prompt">{text}</p>
      {context && (
        <div className="stack" data-testid="prompt-context">
          <Table className="numbers" aria-label="The suggestion's context" columns={['Path', 'Visitors', wide('Human'), wide('AI'), wide('Likely page')]}>
            {context.map((c) => (
              <tr key={c.path}>
                <PathCell path={c.path} copy phoneNote={`Likely page: ${likely(c)}`} />
                <td>{c.visitors?.total ?? '—'}</td>
                <td className="wide-only">{c.visitors?.human ?? '—'}</td>
                <td className="wide-only">{c.visitors?.ai ?? '—'}</td>
                <td className="small wide-only">{likely(c)}</td>
              </tr>
            ))}
          </Table>
        </div>
      )}
      {json && (
        <details>
          <summary>The context as JSON (what the agent reads)</summary>
          <pre className="codeblock">{json}</pre>
        </details>
      )}
    </>
  );
}
