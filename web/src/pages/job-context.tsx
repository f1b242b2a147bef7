// A job's prompt on its page. A suggestion's prompt ends in its context as JSON (for the agent): people
// read it as a table of paths, visitors and likely pages, with the JSON itself behind a disclosure.
import { PathCell, Table, type Column } from '../tables.tsx';
import { splitContext, type ContextPath } from '../prompt-context.ts';

const wide = (label: string): Column => ({ label, className: 'wide-only' });
const likely = (c: ContextPath) => (c.likely.length ? c.likely.join(', ') : '—');
const figure = (n: number | null) => (n === null ? '—' : n.toLocaleString());

export function PromptText({ prompt }: { prompt: string }) {
  const { text, context, json } = splitContext(prompt);
  return (
    <>
      <p className="prompt">{text}</p>
      {context && (
        <div className="stack" data-testid="prompt-context">
          <Table className="numbers" aria-label="The suggestion's context" columns={['Path', 'Visitors', wide('Human'), wide('AI'), wide('Likely page')]}>
            {context.map((c, i) => (
              <tr key={i}>
                <PathCell path={c.path} copy phoneNote={`Likely page: ${likely(c)}`} />
                <td>{figure(c.total)}</td>
                <td className="wide-only">{figure(c.human)}</td>
                <td className="wide-only">{figure(c.ai)}</td>
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
