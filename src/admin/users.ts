// Dashboard operators: the first owner's setup, sign-in, and the session records the HTTP layer's
// cookie sessions (http/session.ts) are kept in. Stored by store/users.ts.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { UserStore, userView, type SessionRow, type UserRow, type UserView } from '../store/users.ts';
import { CodedError } from '../errors.ts';

export { userView, type SessionRow, type UserRow, type UserView };

/** The session records: what http/session.ts reads and writes, and nothing else of the users. */
export type SessionRecords = Pick<
  UserStore,
  'createSession' | 'findSession' | 'sessionAlive' | 'deleteSession' | 'pruneSessions' | 'recordFailure' | 'failures' | 'clearFailures' | 'pruneFailures'
>;

export class UsersService {
  private readonly store: UserStore;
  readonly sessions: SessionRecords;
  constructor(db: Kysely<Database>) {
    this.store = new UserStore(db);
    this.sessions = this.store;
  }

  /** True until the first owner exists. */
  async setupRequired(): Promise<boolean> {
    return (await this.store.count()) === 0;
  }

  /** The first owner; refused (already_set_up) once anyone exists, and for unusable credentials (invalid_user). */
  async createFirstOwner(credentials: { email: string; password: string }): Promise<UserRow> {
    const user = await this.store.createFirstOwner(credentials);
    if (!user) throw new CodedError('already_set_up', 'Folio already has an owner; sign in instead.');
    return user;
  }

  /** The user for these credentials, or undefined (in the same time whether or not the email exists). */
  authenticate(email: string, password: string): Promise<UserRow | undefined> {
    return this.store.authenticate(email, password);
  }
}
