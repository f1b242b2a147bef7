// Dashboard operators: the first owner's setup, sign-in, and the session records the HTTP layer's
// cookie sessions (http/session.ts) are kept in. Stored by store/users.ts.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { UserStore, userView, type SessionRow, type UserView } from '../store/users.ts';
import { CodedError } from '../errors.ts';
import { sameSecret } from '../util/same-secret.ts';

export type { UserView };

/** A session as the HTTP layer sees it: its id and CSRF token (never the hash of its cookie token). */
export interface SessionView {
  id: string;
  csrfToken: string;
}

/** A signed-in operator: the user and the session, as views. */
export interface OperatorView {
  user: UserView;
  session: SessionView;
}

/** The session records: what http/session.ts reads and writes, and nothing else of the users; views, not rows. */
export type SessionRecords = Pick<UserStore, 'sessionAlive' | 'deleteSession' | 'pruneSessions' | 'recordFailure' | 'failures' | 'clearFailures' | 'pruneFailures'> & {
  createSession(userId: string, ttlMs: number): Promise<{ token: string; session: SessionView }>;
  findSession(token: string, ttlMs: number): Promise<OperatorView | undefined>;
};

const sessionView = (row: SessionRow): SessionView => ({ id: row.id, csrfToken: row.csrf_token });

function sessionRecords(store: UserStore): SessionRecords {
  return {
    createSession: async (userId, ttlMs) => {
      const { token, row } = await store.createSession(userId, ttlMs);
      return { token, session: sessionView(row) };
    },
    findSession: async (token, ttlMs) => {
      const found = await store.findSession(token, ttlMs);
      return found && { user: userView(found.user), session: sessionView(found.session) };
    },
    sessionAlive: (id, now) => store.sessionAlive(id, now),
    deleteSession: (id) => store.deleteSession(id),
    pruneSessions: (now) => store.pruneSessions(now),
    recordFailure: (buckets, now) => store.recordFailure(buckets, now),
    failures: (bucket, windowMs, now) => store.failures(bucket, windowMs, now),
    clearFailures: (bucket) => store.clearFailures(bucket),
    pruneFailures: (windowMs, now) => store.pruneFailures(windowMs, now),
  };
}

const alreadySetUp = () => new CodedError('already_set_up', 'Folio already has an owner; sign in instead.');

export class UsersService {
  private readonly store: UserStore;
  readonly sessions: SessionRecords;
  /** What creating the first owner needs (config.setupToken): only whoever started Folio has seen it. */
  readonly #setupToken: string;
  constructor(db: Kysely<Database>, setupToken: string) {
    this.store = new UserStore(db);
    this.sessions = sessionRecords(this.store);
    this.#setupToken = setupToken;
  }

  /** True until the first owner exists. */
  async setupRequired(): Promise<boolean> {
    return (await this.store.count()) === 0;
  }

  /**
   * The first owner, for whoever holds the setup token. Refused without the right token
   * (invalid_setup_token) while setup is open, once anyone exists (already_set_up), and for
   * unusable credentials (invalid_user). The token is never repeated in an answer.
   */
  async createFirstOwner(credentials: { email: string; password: string }, setupToken: string | undefined): Promise<UserView> {
    if (setupToken === undefined || !sameSecret(setupToken, this.#setupToken)) {
      if (!(await this.setupRequired())) throw alreadySetUp();
      throw new CodedError(
        'invalid_setup_token',
        setupToken === undefined || setupToken === ''
          ? 'Creating the owner needs the setup token: open the setup link `folio serve` printed when it started (its log line "Create the owner account: …/setup#token=…"), or send the token as setupToken.'
          : 'The setup token is not right: copy it again from the setup link `folio serve` printed when it started (or from FOLIO_SETUP_TOKEN, if it is set).',
      );
    }
    const user = await this.store.createFirstOwner(credentials);
    if (!user) throw alreadySetUp();
    return userView(user);
  }

  /** The user for these credentials, or undefined (in the same time whether or not the email exists). */
  async authenticate(email: string, password: string): Promise<UserView | undefined> {
    const user = await this.store.authenticate(email, password);
    return user && userView(user);
  }
}
