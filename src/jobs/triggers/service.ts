// Triggers as the HTTP layer uses them: the receiver of code hosts' webhooks, and a project's trigger
// settings as the dashboard edits them (each operation checks that the project exists first).
import type { TriggerStore } from '../../store/triggers.ts';
import type { TriggerDelivery } from '../../contracts/triggers.ts';
import type { TriggerReceiver } from './receiver.ts';
import { triggerSettingsView, updateTriggerSettings, type TriggerSettingsInput, type TriggerSettingsView } from './settings.ts';

export class TriggersService {
  readonly receiver: TriggerReceiver;
  readonly store: TriggerStore;
  private readonly requireProject: (projectId: string) => Promise<unknown>;

  /** `requireProject` throws project_not_found for a project that does not exist. */
  constructor(receiver: TriggerReceiver, store: TriggerStore, requireProject: (projectId: string) => Promise<unknown>) {
    this.receiver = receiver;
    this.store = store;
    this.requireProject = requireProject;
  }

  /** The settings, with the webhook addresses under `baseUrl`. */
  async settings(projectId: string, baseUrl: string): Promise<TriggerSettingsView> {
    await this.requireProject(projectId);
    return triggerSettingsView(this.store, projectId, baseUrl);
  }

  /** Checks and stores new settings (invalid_trigger_settings with the reason); answers them. */
  async update(projectId: string, input: TriggerSettingsInput, baseUrl: string): Promise<TriggerSettingsView> {
    await this.requireProject(projectId);
    await updateTriggerSettings(this.store, projectId, input);
    return triggerSettingsView(this.store, projectId, baseUrl);
  }

  /** A new webhook secret, replacing the old one at once: in this answer only, stored sealed. */
  async rotateSecret(projectId: string, baseUrl: string): Promise<TriggerSettingsView & { secret: string }> {
    await this.requireProject(projectId);
    const secret = await this.store.rotateSecret(projectId);
    return { secret, ...(await triggerSettingsView(this.store, projectId, baseUrl)) };
  }

  async deliveries(projectId: string, limit: number): Promise<TriggerDelivery[]> {
    await this.requireProject(projectId);
    return this.store.recentDeliveries(projectId, limit);
  }
}
