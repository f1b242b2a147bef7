// First-run setup (creates the owner, with the setup token of the link `folio serve` printed) and sign-in.
import { useEffect, useState, type ReactNode } from 'react';
import { api, ApiFailure, type Session } from '../api.ts';
import { ActionForm, SecretField, SubmitButton, TextField, useTitle } from '../ui.tsx';

function CredentialsForm(props: {
  submitLabel: string;
  busyLabel: string;
  newPassword: boolean;
  onSubmit: (email: string, password: string) => Promise<void>;
  /** Fields after the credentials (the setup token). */
  children?: ReactNode;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');

  const submit = async () => {
    if (props.newPassword && password.length < 10) throw new Error('Choose a password of at least 10 characters.');
    if (props.newPassword && password !== confirm) throw new Error('The two passwords do not match.');
    await props.onSubmit(email, password);
  };

  return (
    <ActionForm action={submit} className="stack" noValidate>
      <TextField id="email" label="Email" type="email" autoComplete={props.newPassword ? 'username' : 'email'} required value={email} onChange={setEmail} />
      <SecretField
        id="password"
        label="Password"
        autoComplete={props.newPassword ? 'new-password' : 'current-password'}
        required
        minLength={props.newPassword ? 10 : undefined}
        hint={props.newPassword ? 'At least 10 characters. A passphrase of a few words is good.' : undefined}
        value={password}
        onChange={setPassword}
      />
      {props.newPassword && <SecretField id="confirm" label="Repeat the password" autoComplete="new-password" required value={confirm} onChange={setConfirm} />}
      {props.children}
      <SubmitButton label={props.submitLabel} busyLabel={props.busyLabel} />
    </ActionForm>
  );
}

/**
 * The setup token of the link `folio serve` printed (`/setup#token=…`). It travels in the fragment,
 * which browsers never send, so no access log holds it; read once, it is taken out of the address bar.
 */
function tokenFromLink(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
}

const TOKEN_HINT = (
  <>
    <code>folio serve</code> prints it when it starts, in the line <em>Create the owner account: …/setup#token=…</em> (with Docker, in{' '}
    <code>docker logs</code>); opening that link fills it in. If <code>FOLIO_SETUP_TOKEN</code> is set, it is that value.
  </>
);

export function SetupPage({ onDone }: { onDone: (s: Session) => void }) {
  useTitle('Set up');
  const [fromLink] = useState(tokenFromLink);
  const [token, setToken] = useState(fromLink);
  // Asked for when the link had none, or the one it had was refused.
  const [askToken, setAskToken] = useState(fromLink === '');
  useEffect(() => {
    if (window.location.hash) window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }, []);

  const submit = async (email: string, password: string) => {
    try {
      onDone(await api.setup(email, password, token));
    } catch (err) {
      if (err instanceof ApiFailure && err.code === 'invalid_setup_token') setAskToken(true);
      throw err;
    }
  };

  return (
    <main className="auth" id="main">
      <div className="card auth-card">
        <h1>Welcome to Folio</h1>
        <p>Create the owner account. You will use it to sign in to this dashboard; more operators can be added with <code>folio user create</code>.</p>
        <CredentialsForm submitLabel="Create owner account" busyLabel="Creating…" newPassword onSubmit={submit}>
          {askToken ? (
            <SecretField id="setup-token" label="Setup token" required hint={TOKEN_HINT} value={token} onChange={setToken} />
          ) : (
            <p className="hint" data-testid="token-from-link">The setup token came with the link.</p>
          )}
        </CredentialsForm>
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
