// Repository tokens and webhook secrets stored in plain text by earlier versions are sealed with the
// secret box (key from FOLIO_SECRET), so a copy of the database alone reveals none of them.
import { sql, type Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';
import { isSealed, type SecretBox } from '../secret-box.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect, secrets: SecretBox): Promise<void> {
  const rows = await sql<{ id: string; repo_token: string | null; webhook_secret: string | null }>`
    select id, repo_token, webhook_secret from projects where repo_token is not null or webhook_secret is not null
  `.execute(db);
  for (const row of rows.rows) {
    const seal = (value: string | null, column: string) => (value === null || isSealed(value) ? value : secrets.seal(value, `projects.${column}`));
    await sql`update projects set repo_token = ${seal(row.repo_token, 'repo_token')}, webhook_secret = ${seal(row.webhook_secret, 'webhook_secret')} where id = ${row.id}`.execute(db);
  }
}
