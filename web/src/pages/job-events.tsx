// A job's events as a list that follows new ones inside its own box: each event in one human line,
// with its raw data one click away.
import { useEffect, useRef, useState } from 'react';
import type { JobEvent } from '../api.ts';
import { eventSentence, sentenceIsWhole } from '../../../src/jobs/event-text.ts';
import { Empty } from '../ui.tsx';

/** The pull request's page, when the event is the pull request's and has one. */
const prLink = (e: JobEvent) => (e.type === 'pull_request' && !('clipped' in e.data) ? e.data.url : null);

function EventItem({ e }: { e: JobEvent }) {
  const text = eventSentence(e);
  const link = prLink(e);
  return (
    <li className={`event event-${e.type.replace(/[^a-z_]/g, '-')}`} data-testid="job-event">
      <span className="event-type">{e.type}</span>
      <time dateTime={e.at} title={e.at} className="muted small">
        {e.at.slice(11, 19)}
      </time>
      <div className="event-text">
        {link ? (
          <a href={link} target="_blank" rel="noreferrer">
            {text}
          </a>
        ) : (
          text
        )}
        {!sentenceIsWhole(e.type) && Object.keys(e.data ?? {}).length > 0 && (
          <details className="event-raw">
            <summary>Raw data</summary>
            <pre>{JSON.stringify(e.data, null, 2)}</pre>
          </details>
        )}
      </div>
    </li>
  );
}

/** The events in a box of their own; while "follow" is on, new ones scroll that box (never the page). */
export function EventList({ events }: { events: JobEvent[] }) {
  const box = useRef<HTMLOListElement>(null);
  const [follow, setFollow] = useState(true);
  useEffect(() => {
    const list = box.current;
    if (follow && list) list.scrollTop = list.scrollHeight;
  }, [events.length, follow]);
  if (events.length === 0) return <Empty title="No events yet">Steps of the agent appear here as they happen.</Empty>;
  return (
    <>
      <label className="inline small">
        <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow new events
      </label>
      <ol className="events" aria-label="Job events" ref={box}>
        {events.map((e) => (
          <EventItem key={e.id} e={e} />
        ))}
      </ol>
    </>
  );
}
