// Dashboard operators: the first owner's setup, sign-in, and the session records the HTTP layer's
// cookie sessions (http/session.ts) are kept in. Stored by store/users.ts.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { UserStore, userView, type SessionRow, type UserRow, type UserView } from '../store/users.ts';
import { CodedError } from '../errors.ts';
import { sameSecret } from '../util/same-secret.ts';

export { userView, type SessionRow, type UserRow, type UserView };

/** The session records: what http/session.ts reads and writes, and nothing else of the users. */
export type SessionRecords = Pick<
  UserStore,
  'createSession' | 'findSession' | 'sessionAlive' | 'deleteSession' | 'pruneSessions' | 'recordFailure' | 'failures' | 'clearFailures' | 'pruneFailures'
>;

const alreadySetUp = () => new CodedError('already_set_up', 'Folio already has an owner; sign in instead.');

export class UsersService {
  private readonly store: UserStore;
  readonly sessions: SessionRecords;
  /** What creating the first owner needs (config.setupToken): only whoever started Folio has seen it. */
  readonly #setupToken: string;
  constructor(db: Kysely<Database>, setupToken: string) {
    this.store = new UserStore(db);
    this.sessions = this.store;
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
  async createFirstOwner(credentials: { email: string; password: string }, setupToken: string | undefined): Promise<UserRow> {
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
    return user;
  }

  /** The user for these credentials, or undefined (in the same time whether or not the email exists). */
  authenticate(email: string, password: string): Promise<UserRow | undefined> {
    return this.store.authenticate(email, password);
  }
}
