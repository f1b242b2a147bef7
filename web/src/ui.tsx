// Shared pieces: async loading, copy buttons, alerts, empty states, confirmation dialogs, formatting.
import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { errorMessage } from './api.ts';

export interface Async<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
  set: (value: T) => void;
}

/** Runs `load` on mount and whenever `deps` change; keeps the last data while reloading. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err) => {
        if (!live) return;
        setError(errorMessage(err));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload, set: setData };
}

export function CopyButton({ value, label = 'Copy', what }: { value: string; label?: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
    window.setTimeout(() => setState('idle'), 2000);
  };
  return (
    <button type="button" className="button small secondary" onClick={copy} aria-label={`${label} ${what}`}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : label}
      <span className="visually-hidden" role="status">
        {state === 'copied' ? `${what} copied to the clipboard` : ''}
      </span>
    </button>
  );
}

export function Alert({ kind = 'error', children, title }: { kind?: 'error' | 'warning' | 'success' | 'info'; title?: string; children: ReactNode }) {
  return (
    <div className={`alert ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {title && <strong>{title} </strong>}
      {children}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children && <div className="empty-body">{children}</div>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

/** A modal confirmation built on <dialog>: focus is trapped and Escape cancels. */
export function Confirm(props: { open: boolean; title: string; children: ReactNode; confirmLabel: string; danger?: boolean; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={(e) => (e.preventDefault(), props.onCancel())} className="dialog">
      <h2 id={titleId}>{props.title}</h2>
      <div className="dialog-body">{props.children}</div>
      <div className="actions">
        <button type="button" className="button secondary" onClick={props.onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" className={`button ${props.danger ? 'danger' : ''}`} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${status}`}>{status}</span>;
}

export function formatDate(iso: string | null | undefined, fallback = '—'): string {
  if (!iso) return fallback;
  const d = new Date(iso);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function timeAgo(iso: string | null | undefined, fallback = 'never'): string {
  if (!iso) return fallback;
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  const [n, unit] = a < 60 ? [a, 'second'] : a < 3600 ? [Math.round(a / 60), 'minute'] : a < 86400 ? [Math.round(a / 3600), 'hour'] : [Math.round(a / 86400), 'day'];
  if (a < 5) return 'just now';
  const word = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return future ? `in ${word}` : `${word} ago`;
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Folio` : 'Folio';
  }, [title]);
}

/** The default-model picker of project forms: the server default or one of the allowed models. */
export function ModelSelect(props: { id: string; value: string; onChange: (model: string) => void; models: { default: string; allowed: string[] } }) {
  return (
    <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
      <option value="">Server default ({props.models.default})</option>
      {props.models.allowed.map((m) => (
        <option key={m} value={m}>
          {m}
        </option>
      ))}
    </select>
  );
}
