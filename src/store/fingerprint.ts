// The store remembers which FOLIO_SECRET wrote it: a keyed hash of a constant (never the secret, and
// no way back to it). A process with another secret would seal tokens the others cannot open and
// count returning visitors twice (keyed visitor ids), so it refuses to start. The first process to
// open a store records its fingerprint; a store written before fingerprints records the current one.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { CodedError } from '../errors.ts';
import type { Database } from './schema.ts';

const KEY = 'secret_fingerprint';

export class SecretMismatchError extends CodedError {
  constructor() {
    super(
      'secret_mismatch',
      'This database was written by processes with a different FOLIO_SECRET: start every process on it with the same FOLIO_SECRET as the others (for the embedded store, the one in <data dir>/secret before it changed).',
    );
  }
}

export function secretFingerprint(secret: string): string {
  return createHmac('sha256', secret).update('folio secret fingerprint v1').digest('hex');
}

/** Records the fingerprint if the store has none (atomically: the first writer wins), then compares. */
export async function checkSecretFingerprint(db: Kysely<Database>, secret: string): Promise<void> {
  const mine = secretFingerprint(secret);
  await db.insertInto('folio_meta').values({ key: KEY, value: mine }).onConflict((oc) => oc.column('key').doNothing()).execute();
  const row = await db.selectFrom('folio_meta').select('value').where('key', '=', KEY).executeTakeFirstOrThrow();
  if (row.value.length !== mine.length || !timingSafeEqual(Buffer.from(row.value), Buffer.from(mine))) throw new SecretMismatchError();
}
