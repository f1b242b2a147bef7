// First-run setup (creates the owner) and sign-in.
import { useState } from 'react';
import { api, type Session } from '../api.ts';
import { ActionForm, SecretField, SubmitButton, TextField, useTitle } from '../ui.tsx';

function CredentialsForm(props: { submitLabel: string; busyLabel: string; newPassword: boolean; onSubmit: (email: string, password: string) => Promise<void> }) {
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
      <SubmitButton label={props.submitLabel} busyLabel={props.busyLabel} />
    </ActionForm>
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
