// API keys as the HTTP layer needs them: verifying the key of a request (and again for a live stream),
// and the dashboard's key management, answered as views (never the stored hash). Stored by
// store/api-keys.ts; `keyCovers` there is the one answer to "may this key act on this project?".
import { apiKeyView, keyCovers, type ApiKeyRow, type ApiKeyStore, type ApiKeyView, type KeyCheck, type KeyRefusal, type StoredKey } from '../store/api-keys.ts';
import type { ProjectsService } from './projects.ts';
import { CodedError } from '../errors.ts';

export { apiKeyView, keyCovers, type ApiKeyView, type KeyCheck, type KeyRefusal, type StoredKey };

/** What a new key of either kind may set. */
export interface KeySettings {
  name?: string;
  scope?: 'read' | 'write';
  expiresInDays?: number | null;
}

/** A new key: the one answer that holds the key itself. */
export type CreatedKey = ApiKeyView & { key: string };

const keyNotFound = (message: string) => new CodedError('key_not_found', message);

function storedSettings(settings: KeySettings) {
  if (settings.name !== undefined && settings.name.trim() === '') throw new CodedError('invalid_key', 'The key name must not be blank.');
  const expiresAt = settings.expiresInDays ? Date.now() + settings.expiresInDays * 86_400_000 : null;
  return { name: settings.name, scope: settings.scope ?? 'write', expiresAt };
}

const created = (result: { key: string; row: StoredKey | ApiKeyRow }): CreatedKey => ({ ...apiKeyView(result.row), key: result.key });

export class KeysService {
  /** The stored keys (the CLI and tests make keys directly). */
  readonly store: ApiKeyStore;
  private readonly projects: ProjectsService;
  constructor(store: ApiKeyStore, projects: ProjectsService) {
    this.store = store;
    this.projects = projects;
  }

  // ---- the key of a request

  /** Checks a presented key (cached per process, validated against the store's data version; a revocation anywhere clears the cache). */
  verify(presented: string, since?: number): Promise<KeyCheck> {
    return this.store.verify(presented, since);
  }

  /** The key's state read again from the store (live streams check that it still holds). */
  reverify(keyId: string): Promise<KeyCheck> {
    return this.store.reverify(keyId);
  }

  // ---- the dashboard's key management

  /** A project's own keys, then the keys that cover many projects including it. */
  async listForProject(projectId: string): Promise<ApiKeyView[]> {
    await this.projects.require(projectId);
    return (await this.store.listCovering(projectId)).map(apiKeyView);
  }

  async createForProject(projectId: string, settings: KeySettings): Promise<CreatedKey> {
    await this.projects.require(projectId);
    return created(await this.store.create({ projectId, ...storedSettings(settings) }));
  }

  /** Revokes a key of this project (a key of another project is not found here). */
  async revokeInProject(projectId: string, keyId: string): Promise<ApiKeyView> {
    await this.projects.require(projectId);
    const row = await this.store.get(keyId);
    if (!row || row.project_id !== projectId) throw keyNotFound(`API key "${keyId}" does not exist in this project.`);
    return apiKeyView((await this.store.revoke(row.id))!);
  }

  async listAll(): Promise<ApiKeyView[]> {
    return (await this.store.listAll()).map(apiKeyView);
  }

  /** A key that covers every project, or the listed ones (each must exist). */
  async createCovering(cover: { allProjects?: boolean; projectIds?: string[] }, settings: KeySettings): Promise<CreatedKey> {
    const { allProjects, projectIds } = cover;
    if ((allProjects === true) === (projectIds !== undefined)) {
      throw new CodedError('invalid_key', 'Say what the key covers: either "allProjects": true or a list of "projectIds".');
    }
    if (allProjects === false) throw new CodedError('invalid_key', 'Send "allProjects": true, or leave it out and list "projectIds".');
    for (const id of projectIds ?? []) await this.projects.require(id);
    return created(await this.store.createAdmin({ projectIds: allProjects ? null : projectIds!, ...storedSettings(settings) }));
  }

  async revoke(keyId: string): Promise<ApiKeyView> {
    const row = await this.store.revoke(keyId);
    if (!row) throw keyNotFound(`API key "${keyId}" does not exist.`);
    return apiKeyView(row);
  }
}
