// A small history router: the dashboard has a handful of routes and needs no dependency for them.
import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';
import { rangeFromQuery, type DayRange } from './dates.ts';

const CHANGE = 'folio:navigate';

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(CHANGE));
  window.scrollTo(0, 0);
}

export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({ path: window.location.pathname.replace(/\/+$/, '') || '/', query: new URLSearchParams(window.location.search) });
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return loc;
}

/** Changes the current address's query in place (no history entry, no scroll): a page's view kept in its link. */
export function setQuery(params: Record<string, string | null>): void {
  const query = new URLSearchParams(window.location.search);
  for (const [name, value] of Object.entries(params)) {
    if (value === null) query.delete(name);
    else query.set(name, value);
  }
  const search = query.toString();
  window.history.replaceState(null, '', `${window.location.pathname}${search ? `?${search}` : ''}`);
  window.dispatchEvent(new Event(CHANGE));
}

/** The date range of the address (`?days=30` or `?from=…&to=…`), and setters that write it there. */
export function useRangeQuery(defaultDays: number): { range: DayRange; setDays: (days: number) => void; setDates: (from: string, to: string) => void } {
  const { query } = useLocation();
  return {
    range: rangeFromQuery(query, defaultDays),
    setDays: (days) => setQuery({ days: String(days), from: null, to: null }),
    setDates: (from, to) => setQuery({ days: null, from, to }),
  };
}

/** Matches `/projects/:id/jobs` style patterns; returns the params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}

export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const { onClick, ...rest } = props;
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || props.target) return;
    e.preventDefault();
    navigate(props.href);
  };
  return <a {...rest} onClick={handle} />;
}

/** Replaces the current entry with `to` once rendered. */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

/** The dashboard page of one job. */
export function jobPath(projectId: string, jobId: string): string {
  return `/projects/${encodeURIComponent(projectId)}/jobs/${encodeURIComponent(jobId)}`;
}
