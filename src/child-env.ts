// What child processes (git) inherit from Folio's environment. Not configuration (src/config.ts is
// the only reader of Folio's settings): only the variables a program needs to run, so src/git takes
// them from here and never imports config (the config → git → config loop is cut).
type Env = Record<string, string | undefined>;

/**
 * What child processes (git) inherit: what they need to run, never Folio's secrets. No proxy
 * variables: git's HTTP traffic goes through Folio's egress proxy only (curl would honour NO_PROXY
 * even with a proxy set, and bypass the address policy).
 */
const CHILD_ENV = /^(PATH|HOME|USER|LOGNAME|SHELL|TMPDIR|TMP|TEMP|LANG|LANGUAGE|TZ|SSL_CERT_FILE|SSL_CERT_DIR|SSH_AUTH_SOCK)$/;

export function childProcessEnv(env: Env = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && CHILD_ENV.test(k)) out[k] = v;
  return out;
}

