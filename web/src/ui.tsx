// Shared pieces: async loading, copy buttons, alerts, empty states, confirmation dialogs, tables,
// formatting, and the pieces of every form (labelled fields, secrets, submitting).
import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type FormEvent, type FormHTMLAttributes, type ReactNode } from 'react';
import { errorMessage, type Session } from './api.ts';
import { isoMinute } from './dates.ts';

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

/** A time in the dashboard's one format (web/src/dates.ts): `YYYY-MM-DD HH:MM`, UTC. */
export const formatDate = (iso: string | null | undefined, fallback = '—') => isoMinute(iso, fallback);

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

// ---------------------------------------------------------------- forms

/** A choice of a select: its value and the words shown. */
export type Option<V extends string> = readonly [value: V, text: string];

/** The choices of a model picker: '' for the default (the server's unless `defaultText` says otherwise), then the allowed models. */
export function modelOptions(models: Session['models'], defaultText = `Server default (${models.default})`): Option<string>[] {
  return [['', defaultText], ...models.allowed.map((m): Option<string> => [m, m])];
}

const hintId = (id: string, hint: ReactNode) => (hint ? `${id}-hint` : undefined);

/** A control with its label (tied by id) and an optional hint (tied by aria-describedby), then `after`. */
function Field(props: { id: string; label: string; hint?: ReactNode; inline?: boolean; after?: ReactNode; children: ReactNode }) {
  return (
    <div className={props.inline ? 'field inline' : 'field'}>
      <label htmlFor={props.id}>{props.label}</label>
      {props.children}
      {props.hint && (
        <p id={hintId(props.id, props.hint)} className="hint">
          {props.hint}
        </p>
      )}
      {props.after}
    </div>
  );
}

/** What every text-like field takes. */
interface TextLikeProps {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: ReactNode;
  placeholder?: string;
  required?: boolean;
}

interface TextFieldProps extends TextLikeProps {
  maxLength?: number;
  type?: 'email' | 'url';
  autoComplete?: string;
  /** A multi-line text of this many rows. */
  rows?: number;
}

/** A labelled text input, or a textarea when `rows` is given. */
export function TextField({ id, label, value, onChange, hint, rows, type, autoComplete, ...rest }: TextFieldProps) {
  const common = { id, value, 'aria-describedby': hintId(id, hint), ...rest };
  return (
    <Field id={id} label={label} hint={hint}>
      {rows ? (
        <textarea rows={rows} {...common} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input type={type} autoComplete={autoComplete} {...common} onChange={(e) => onChange(e.target.value)} />
      )}
    </Field>
  );
}

/** A labelled select; `inline` puts the label beside it (filters in a page head). */
export function SelectField<V extends string>(props: { id: string; label: string; value: V; onChange: (value: V) => void; options: readonly Option<V>[]; hint?: ReactNode; inline?: boolean }) {
  return (
    <Field id={props.id} label={props.label} hint={props.hint} inline={props.inline}>
      {/* The options are the only values the select can take, so the value is a V. */}
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.target.value as V)} aria-describedby={hintId(props.id, props.hint)}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}

interface SecretFieldProps extends TextLikeProps {
  minLength?: number;
  /** Off for tokens and secrets; sign-in forms say which password it is, for password managers. */
  autoComplete?: 'off' | 'current-password' | 'new-password';
  /** Shown below, e.g. a choice to remove the stored secret. */
  after?: ReactNode;
}

/** A password field with a button that shows or hides what was typed. */
export function SecretField({ id, label, onChange, hint, autoComplete = 'off', after, ...rest }: SecretFieldProps) {
  const [shown, setShown] = useState(false);
  return (
    <Field id={id} label={label} hint={hint} after={after}>
      <div className="secret-row">
        <input
          id={id}
          type={shown ? 'text' : 'password'}
          autoComplete={autoComplete}
          autoCapitalize="off"
          spellCheck={false}
          aria-describedby={hintId(id, hint)}
          {...rest}
          onChange={(e) => onChange(e.target.value)}
        />
        {/* Named by its text, not aria-label, so the field's label names only the field. */}
        <button type="button" className="button small secondary" aria-controls={id} onClick={() => setShown((s) => !s)}>
          {shown ? 'Hide' : 'Show'}
          <span className="visually-hidden"> {label}</span>
        </button>
      </div>
    </Field>
  );
}

/**
 * A secret the server keeps and never returns (a token, a webhook secret): left empty it stays as it
 * is, typed it replaces the stored one, and `remove` (when set) offers to clear it.
 */
export function StoredSecretField(props: TextLikeProps & { isSet: boolean; unsetText: string; remove?: { label: string; value: boolean; onChange: (remove: boolean) => void } }) {
  const { isSet, unsetText, remove, ...field } = props;
  const removeBox = isSet && remove && (
    <label className="inline small">
      <input type="checkbox" checked={remove.value} onChange={(e) => remove.onChange(e.target.checked)} /> {remove.label}
    </label>
  );
  return <SecretField {...field} placeholder={isSet ? 'Set — type to replace' : unsetText} after={removeBox} />;
}

/** A card of related fields under a legend. */
export function Fieldset({ legend, children }: { legend: string; children: ReactNode }) {
  return (
    <fieldset className="card stack">
      <legend>{legend}</legend>
      {children}
    </fieldset>
  );
}

export interface Action {
  busy: boolean;
  error: string | null;
  run: () => Promise<void>;
}

/** Runs `action` on demand, one run at a time, keeping whether it runs and why it last failed (throw to refuse). */
export function useAction(action: () => Promise<void>): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const running = useRef(false);
  const run = async () => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** A button that runs an action (see useAction): disabled, and saying `busyLabel` if given, while it runs. */
export function ActionButton({ action, label, busyLabel = label }: { action: Action; label: string; busyLabel?: string }) {
  return (
    <button type="button" className="button secondary" onClick={() => void action.run()} disabled={action.busy} aria-busy={action.busy}>
      {action.busy ? busyLabel : label}
    </button>
  );
}

const SubmitBusy = createContext(false);

type FormAttributes = Omit<FormHTMLAttributes<HTMLFormElement>, 'onSubmit' | 'children' | 'action'>;

/** A form whose submit runs `action`: busy while it runs (its SubmitButton too), its failure shown above the fields. */
export function ActionForm({ action, errorTitle, children, ...attributes }: FormAttributes & { action: () => Promise<void>; errorTitle?: string; children: ReactNode }) {
  const submit = useAction(action);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    void submit.run();
  };
  return (
    <form {...attributes} onSubmit={onSubmit} aria-busy={submit.busy}>
      {submit.error && <Alert title={errorTitle}>{submit.error}</Alert>}
      <SubmitBusy.Provider value={submit.busy}>{children}</SubmitBusy.Provider>
    </form>
  );
}

/** The submit button of an ActionForm: disabled and saying `busyLabel` while the form's action runs. */
export function SubmitButton({ label, busyLabel, disabled = false }: { label: string; busyLabel: string; disabled?: boolean }) {
  const busy = useContext(SubmitBusy);
  return (
    <button type="submit" className="button" disabled={busy || disabled} aria-busy={busy}>
      {busy ? busyLabel : label}
    </button>
  );
}
