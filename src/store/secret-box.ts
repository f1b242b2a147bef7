// Secrets kept in the state store (repository tokens, webhook secrets) are sealed with AES-256-GCM
// under a key derived from FOLIO_SECRET, so a copy of the database file alone reveals none of them.
// A sealed value is `enc:v1:<base64url(iv ‖ tag ‖ ciphertext)>`; the column name is bound in as
// associated data, so a sealed value copied into another column does not open.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { CodedError } from '../errors.ts';

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBoxError extends CodedError {
  constructor(message: string) {
    super('secret_unreadable', message);
  }
}

export interface SecretBox {
  /** Seals `plain` for the column `purpose` (e.g. "projects.repo_token"). */
  seal(plain: string, purpose: string): string;
  /** Opens a value sealed for `purpose`; throws SecretBoxError when it was sealed with another key or tampered with. */
  open(stored: string, purpose: string): string;
}

export const isSealed = (stored: string): boolean => stored.startsWith(PREFIX);

export function createSecretBox(folioSecret: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', folioSecret, 'folio-secret-box', 'aes-256-gcm v1', 32));
  return {
    seal(plain, purpose) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(purpose));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(stored, purpose) {
      if (!isSealed(stored)) throw new SecretBoxError(`A stored ${purpose} is not sealed; run "folio migrate".`);
      const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
      if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError(`A stored ${purpose} is damaged.`);
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError(`A stored ${purpose} cannot be opened: it was sealed with another FOLIO_SECRET or changed.`);
      }
    },
  };
}
