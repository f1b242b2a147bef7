// Dashboard operators and their sessions. Passwords are hashed with scrypt (memory-hard, node:crypto);
// session tokens are stored only as SHA-256 hashes.
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.ts';
import type { SessionsTable, UserRole, UsersDatabase, UsersTable } from './users-schema.ts';
import { newId } from './ids.ts';
import type { User } from '../contracts/dashboard.ts';
import { CodedError } from '../errors.ts';

export type UserRow = Selectable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;

/** A user as the dashboard API shows it. */
export type UserView = User;

export class UserInputError extends CodedError {
  constructor(message: string) {
    super('invalid_user', message);
  }
}

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** scrypt cost: N=2^15, r=8 uses 32 MiB per hash. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keyLength: 32 } as const;

function scryptAsync(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyLength, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keyLength);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64url');
  const expected = Buffer.from(parts[5], 'base64url');
  const actual = await scryptAsync(password, salt, N, r, p, expected.length);
  return timingSafeEqual(actual, expected);
}

/** A hash to verify against when the email is unknown, so both paths take the same time. */
let dummyHash: Promise<string> | null = null;
const dummy = () => (dummyHash ??= hashPassword(randomBytes(16).toString('hex')));

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function validateCredentials(email: string, password: string): void {
  if (email.includes('\0') || password.includes('\0')) throw new UserInputError('The email and password must not contain NUL characters.');
  if (!EMAIL.test(normalizeEmail(email))) throw new UserInputError(`"${email}" is not an email address.`);
  if (password.length < MIN_PASSWORD_LENGTH) throw new UserInputError(`The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new UserInputError(`The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`);
}

export function userView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    lastLoginAt: row.last_login_at === null ? null : new Date(Number(row.last_login_at)).toISOString(),
  };
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export class UserStore {
  private readonly db: Kysely<Database & UsersDatabase>;
  constructor(db: Kysely<Database>) {
    this.db = db.withTables<UsersDatabase>();
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Creates a user; the first one is the owner. Throws UserInputError for bad input or a taken email. */
  async create(input: { email: string; password: string; role?: UserRole }): Promise<UserRow> {
    validateCredentials(input.email, input.password);
    const email = normalizeEmail(input.email);
    if (await this.findByEmail(email)) throw new UserInputError(`A user with the email ${email} already exists.`);
    const now = Date.now();
    const row: UserRow = {
      id: newId('usr'),
      email,
      password_hash: await hashPassword(input.password),
      role: input.role ?? ((await this.count()) === 0 ? 'owner' : 'operator'),
      created_at: now,
      updated_at: now,
      last_login_at: null,
    };
    try {
      await this.db.insertInto('users').values(row).execute();
    } catch (err) {
      if (/UNIQUE|unique|23505/.test(String((err as Error)?.message) + String((err as { code?: string }).code))) {
        throw new UserInputError(`A user with the email ${email} already exists.`);
      }
      throw err;
    }
    return row;
  }

  /**
   * Creates the owner only while there is no user at all. Returns undefined when one exists already.
   * The check and insert run in one transaction so two concurrent setups cannot both succeed.
   */
  async createFirstOwner(input: { email: string; password: string }): Promise<UserRow | undefined> {
    validateCredentials(input.email, input.password);
    const passwordHash = await hashPassword(input.password);
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
      if (existing) return undefined;
      const now = Date.now();
      const row: UserRow = {
        id: newId('usr'),
        email: normalizeEmail(input.email),
        password_hash: passwordHash,
        role: 'owner',
        created_at: now,
        updated_at: now,
        last_login_at: null,
      };
      await trx.insertInto('users').values(row).execute();
      return row;
    });
  }

  list(): Promise<UserRow[]> {
    return this.db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  get(id: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByEmail(email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
  }

  async setPassword(id: string, password: string): Promise<void> {
    if (password.length < MIN_PASSWORD_LENGTH) throw new UserInputError(`The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
    await this.db.updateTable('users').set({ password_hash: await hashPassword(password), updated_at: Date.now() }).where('id', '=', id).execute();
    await this.db.deleteFrom('sessions').where('user_id', '=', id).execute();
  }

  /** The user for these credentials, or undefined. Takes the same time whether or not the email exists. */
  async authenticate(email: string, password: string): Promise<UserRow | undefined> {
    const user = await this.findByEmail(email);
    const ok = await verifyPassword(password, user?.password_hash ?? (await dummy()));
    if (!user || !ok) return undefined;
    await this.db.updateTable('users').set({ last_login_at: Date.now() }).where('id', '=', user.id).execute();
    return user;
  }

  // ------------------------------------------------------------ sessions

  /** Creates a session; returns the cookie token (shown once) and the row. */
  async createSession(userId: string, ttlMs: number): Promise<{ token: string; row: SessionRow }> {
    const token = randomBytes(32).toString('base64url');
    const now = Date.now();
    const row: SessionRow = {
      id: newId('ses'),
      token_hash: hashToken(token),
      user_id: userId,
      csrf_token: randomBytes(32).toString('base64url'),
      created_at: now,
      expires_at: now + ttlMs,
      last_seen_at: now,
    };
    await this.db.insertInto('sessions').values(row).execute();
    return { token, row };
  }

  /** The live session and its user for a cookie token; sliding expiry is extended at most once a minute. */
  async findSession(token: string, ttlMs: number, now = Date.now()): Promise<{ session: SessionRow; user: UserRow } | undefined> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
    const session = await this.db.selectFrom('sessions').selectAll().where('token_hash', '=', hashToken(token)).executeTakeFirst();
    if (!session || Number(session.expires_at) <= now) return undefined;
    const user = await this.get(session.user_id);
    if (!user) return undefined;
    if (now - Number(session.last_seen_at) > 60_000) {
      const expiresAt = now + ttlMs;
      await this.db.updateTable('sessions').set({ last_seen_at: now, expires_at: expiresAt }).where('id', '=', session.id).execute();
      session.last_seen_at = now;
      session.expires_at = expiresAt;
    }
    return { session, user };
  }

  /** True while the session exists, has not expired and its user exists (no sliding of its expiry). */
  async sessionAlive(id: string, now = Date.now()): Promise<boolean> {
    const row = await this.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select('sessions.id')
      .where('sessions.id', '=', id)
      .where('sessions.expires_at', '>', now)
      .executeTakeFirst();
    return row !== undefined;
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  async pruneSessions(now = Date.now()): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  }

  // ------------------------------------------------------------ sign-in attempts

  async recordFailure(buckets: string[], now = Date.now()): Promise<void> {
    if (buckets.length === 0) return;
    await this.db.insertInto('login_attempts').values(buckets.map((bucket) => ({ bucket, at: now }))).execute();
  }

  /** Failed attempts per bucket within the window, and when the oldest of them leaves it. */
  async failures(bucket: string, windowMs: number, now = Date.now()): Promise<{ count: number; oldestAt: number | null }> {
    const row = await this.db
      .selectFrom('login_attempts')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('at').as('oldest')])
      .where('bucket', '=', bucket)
      .where('at', '>', now - windowMs)
      .executeTakeFirstOrThrow();
    return { count: Number(row.n), oldestAt: row.oldest === null ? null : Number(row.oldest) };
  }

  async clearFailures(bucket: string): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('bucket', '=', bucket).execute();
  }

  async pruneFailures(windowMs: number, now = Date.now()): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('at', '<=', now - windowMs).execute();
  }
}
