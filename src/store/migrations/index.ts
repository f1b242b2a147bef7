// Every migration, by name: Kysely's migrator runs them in the order of their names (the numbers),
// whatever the order here. Add a new file and list it here; never edit one that has shipped.
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';
import type { SecretBox } from '../secret-box.ts';
import * as m001 from './001_core.ts';
import * as m002 from './002_users.ts';
import * as m003 from './003_sealed_secrets.ts';
import * as m004 from './004_webhook_outbox.ts';
import * as m005 from './005_pr_checks.ts';
import * as m006 from './006_triggers_admin_keys.ts';
import * as m007 from './007_trigger_dedupe_per_project.ts';
import * as m008 from './008_secret_fingerprint.ts';
import * as m009 from './009_trigger_meaning_dedupe.ts';
import * as m010 from './010_suggestions.ts';
import * as m011 from './011_job_titles.ts';
import * as m012 from './012_redirect_hosts.ts';
import * as m013 from './013_site_build.ts';
import * as m014 from './014_budgets_instructions.ts';
import * as m015 from './015_review_comments.ts';
import * as m016 from './016_job_pull_requests.ts';

export interface FolioMigration {
  up(db: Kysely<unknown>, dialect: StoreDialect, secrets: SecretBox): Promise<void>;
}

export const migrations: Record<string, FolioMigration> = {
  '001_core': m001,
  '002_users': m002,
  '003_sealed_secrets': m003,
  '004_webhook_outbox': m004,
  '005_pr_checks': m005,
  '006_triggers_admin_keys': m006,
  '007_trigger_dedupe_per_project': m007,
  '008_secret_fingerprint': m008,
  '009_trigger_meaning_dedupe': m009,
  '010_suggestions': m010,
  '011_job_titles': m011,
  '012_redirect_hosts': m012,
  '013_site_build': m013,
  '014_budgets_instructions': m014,
  '015_review_comments': m015,
  '016_job_pull_requests': m016,
};
