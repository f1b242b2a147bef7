// Table shapes of the dashboard's operators, sessions and sign-in attempts (migration 002_users).
import type { Generated } from 'kysely';

export type UserRole = 'owner' | 'operator';

export interface UsersTable {
  id: string;
  /** Lower-cased. */
  email: string;
  /** scrypt$N$r$p$salt$hash (base64url). */
  password_hash: string;
  role: UserRole;
  created_at: number;
  updated_at: number;
  last_login_at: number | null;
}

export interface SessionsTable {
  id: string;
  /** SHA-256 (hex) of the cookie's token; the token itself is never stored. */
  token_hash: string;
  user_id: string;
  /** Synchronizer token: every state-changing request of this session sends it in X-CSRF-Token. */
  csrf_token: string;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
}

export interface LoginAttemptsTable {
  id: Generated<number>;
  /** `email:<address>` or `ip:<address>`: failed sign-ins counted per bucket. */
  bucket: string;
  at: number;
}

// A type alias (not an interface) so Kysely's withTables<UsersDatabase>() accepts it.
export type UsersDatabase = {
  users: UsersTable;
  sessions: SessionsTable;
  login_attempts: LoginAttemptsTable;
};
