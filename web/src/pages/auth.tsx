// First-run setup (creates the owner) and sign-in.
import { useState, type FormEvent } from 'react';
import { api, errorMessage, type Session } from '../api.ts';
import { Alert, useTitle } from '../ui.tsx';

function CredentialsForm(props: { submitLabel: string; busyLabel: string; newPassword: boolean; onSubmit: (email: string, password: string) => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (props.newPassword && password.length < 10) return setError('Choose a password of at least 10 characters.');
    if (props.newPassword && password !== confirm) return setError('The two passwords do not match.');
    setBusy(true);
    try {
      await props.onSubmit(email, password);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} className="stack" noValidate>
      {error && <Alert>{error}</Alert>}
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" type="email" autoComplete={props.newPassword ? 'username' : 'email'} required value={email} onChange={(e) => setEmail(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete={props.newPassword ? 'new-password' : 'current-password'}
          required
          minLength={props.newPassword ? 10 : undefined}
          aria-describedby={props.newPassword ? 'password-hint' : undefined}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {props.newPassword && <p id="password-hint" className="hint">At least 10 characters. A passphrase of a few words is good.</p>}
      </div>
      {props.newPassword && (
        <div className="field">
          <label htmlFor="confirm">Repeat the password</label>
          <input id="confirm" type="password" autoComplete="new-password" required value={confirm} onChange={(e) => setConfirm(e.target.value)} />
        </div>
      )}
      <button type="submit" className="button" disabled={busy}>
        {busy ? props.busyLabel : props.submitLabel}
      </button>
    </form>
  );
}

export function SetupPage({ onDone }: { onDone: (s: Session) => void }) {
  useTitle('Set up');
  return (
    <main className="auth" id="main">
      <div className="card auth-card">
        <h1>Welcome to Folio</h1>
        <p>Create the owner account. You will use it to sign in to this dashboard; more operators can be added with <code>folio user create</code>.</p>
        <CredentialsForm submitLabel="Create owner account" busyLabel="Creating…" newPassword onSubmit={async (e, p) => onDone(await api.setup(e, p))} />
      </div>
    </main>
  );
}

export function LoginPage({ onDone }: { onDone: (s: Session) => void }) {
  useTitle('Sign in');
  return (
    <main className="auth" id="main">
      <div className="card auth-card">
        <h1>Sign in to Folio</h1>
        <CredentialsForm submitLabel="Sign in" busyLabel="Signing in…" newPassword={false} onSubmit={async (e, p) => onDone(await api.login(e, p))} />
      </div>
    </main>
  );
}
