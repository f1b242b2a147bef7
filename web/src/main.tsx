// The Folio dashboard: session bootstrap, layout and routes.
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { api, setCsrfToken, whenSignedOut, type Session } from './api.ts';
import { Link, match, navigate, Redirect, useLocation } from './router.tsx';
import { Alert, Loading, useAsync } from './ui.tsx';
import { SetupPage, LoginPage } from './pages/auth.tsx';
import { ProjectsPage } from './pages/projects.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { KeysPage } from './pages/keys.tsx';
import { JobsPage } from './pages/jobs.tsx';
import { JobPage } from './pages/job.tsx';
import { AnalyticsPage } from './pages/analytics.tsx';
import { InsightsPage } from './pages/insights.tsx';
import { UsagePage } from './pages/usage.tsx';
import './styles.css';

type Boot = { kind: 'loading' } | { kind: 'setup' } | { kind: 'signed-out' } | { kind: 'signed-in'; session: Session } | { kind: 'error'; message: string };

function App() {
  const [boot, setBoot] = useState<Boot>({ kind: 'loading' });
  const { path, query } = useLocation();

  const signedIn = (session: Session) => {
    setCsrfToken(session.csrfToken);
    setBoot({ kind: 'signed-in', session });
  };

  useEffect(() => {
    whenSignedOut(() => {
      setCsrfToken(null);
      setBoot({ kind: 'signed-out' });
    });
    (async () => {
      try {
        const { setupRequired } = await api.setupRequired();
        if (setupRequired) return setBoot({ kind: 'setup' });
        try {
          signedIn(await api.session());
        } catch {
          setBoot({ kind: 'signed-out' });
        }
      } catch (err) {
        setBoot({ kind: 'error', message: (err as Error).message });
      }
    })();
  }, []);

  // Keep the address bar in step with what is shown.
  useEffect(() => {
    if (boot.kind === 'setup' && path !== '/setup') navigate('/setup', { replace: true });
    // After sign-in, return to the page the session ended on.
    if (boot.kind === 'signed-out' && path !== '/login') {
      navigate(path.startsWith('/projects/') ? `/login?next=${encodeURIComponent(path)}` : '/login', { replace: true });
    }
    if (boot.kind === 'signed-in' && (path === '/' || path === '/login' || path === '/setup')) {
      const next = query.get('next');
      navigate(next && /^\/projects\/[^/]/.test(next) ? next : '/projects', { replace: true });
    }
  }, [boot.kind, path, query]);

  if (boot.kind === 'loading') return <main className="center"><Loading what="Folio" /></main>;
  if (boot.kind === 'error') return <main className="center"><Alert title="Folio is not reachable.">{boot.message}</Alert></main>;
  if (boot.kind === 'setup') return <SetupPage onDone={signedIn} />;
  if (boot.kind === 'signed-out') return <LoginPage onDone={signedIn} />;

  const signOut = async () => {
    try {
      await api.logout();
    } finally {
      setCsrfToken(null);
      setBoot({ kind: 'signed-out' });
    }
  };
  return <Shell session={boot.session} path={path} onSignOut={signOut} />;
}

const PROJECT_TABS = [
  ['jobs', 'Agent jobs'],
  ['analytics', 'Analytics'],
  ['insights', 'Insights'],
  ['usage', 'Usage'],
  ['keys', 'API keys'],
  ['settings', 'Settings'],
] as const;

function Shell({ session, path, onSignOut }: { session: Session; path: string; onSignOut: () => void }) {
  const projectId = /^\/projects\/([^/]+)/.exec(path)?.[1];
  const project = useAsync(() => (projectId ? api.project(decodeURIComponent(projectId)) : Promise.resolve(undefined)), [projectId]);
  let page;
  let m: Record<string, string> | null;
  if (path === '/projects') page = <ProjectsPage session={session} />;
  else if ((m = match('/projects/:id', path))) page = <Redirect to={`/projects/${encodeURIComponent(m.id)}/jobs`} />;
  else if ((m = match('/projects/:id/jobs', path))) page = <JobsPage projectId={m.id} session={session} />;
  else if ((m = match('/projects/:id/jobs/:jobId', path))) page = <JobPage projectId={m.id} jobId={m.jobId} />;
  else if ((m = match('/projects/:id/analytics', path))) page = <AnalyticsPage projectId={m.id} />;
  else if ((m = match('/projects/:id/insights', path))) page = <InsightsPage projectId={m.id} />;
  else if ((m = match('/projects/:id/usage', path))) page = <UsagePage projectId={m.id} />;
  else if ((m = match('/projects/:id/keys', path))) page = <KeysPage projectId={m.id} />;
  else if ((m = match('/projects/:id/settings', path)))
    page = <SettingsPage projectId={m.id} session={session} onSaved={(p) => project.set(p)} />;
  else
    page = (
      <section>
        <h1>Page not found</h1>
        <p>
          There is nothing at <code>{path}</code>. <Link href="/projects">Go to your projects</Link>.
        </p>
      </section>
    );

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/projects" className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" /> Folio
        </Link>
        <nav aria-label="Account" className="account">
          <span className="muted" title="Signed in as">{session.user.email}</span>
          <button type="button" className="button small secondary" onClick={onSignOut}>
            Sign out
          </button>
        </nav>
      </header>
      {projectId && (
        <div className="project-bar">
          <div className="project-name">
            <Link href="/projects" className="muted">Projects</Link> <span aria-hidden="true">/</span>{' '}
            <strong>{project.data?.name ?? (project.error ? 'Unknown project' : '…')}</strong>
          </div>
          <nav aria-label="Project" className="tabs">
            {PROJECT_TABS.map(([tab, label]) => {
              const href = `/projects/${projectId}/${tab}`;
              const current = path === href || path.startsWith(href + '/');
              return (
                <Link key={tab} href={href} aria-current={current ? 'page' : undefined} className={current ? 'tab current' : 'tab'}>
                  {label}
                </Link>
              );
            })}
          </nav>
        </div>
      )}
      <main id="main" className="content" tabIndex={-1}>
        {project.error && projectId ? <Alert title="This project could not be loaded.">{project.error}</Alert> : page}
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
