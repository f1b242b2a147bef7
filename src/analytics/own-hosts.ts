// A project's own hosts: those of its site origins (the project's settings; the collect endpoint's CORS
// list). A reader's click from one of the site's pages to another is not a referral: such a view counts
// as having no referrer. The rule is applied at ingest (the referrer is dropped before it is stored) and
// in the referrers report's read (rows stored before read the same); isOwnHost is the rule, and the
// engines' SQL tests the same set (reports/referrers.ts). A not-found view keeps its own-site
// referrer: there it says that a link on the site itself is broken, which its report is for.
import { LRUCache } from 'lru-cache';
import type { AnalyticsEngine, ImportColumns, StoredEvent } from './engine.ts';

/** Host names as referrer hosts are stored: ASCII, lower case, no port, no trailing dot. */
export type OwnHosts = ReadonlySet<string>;

export const NO_OWN_HOSTS: OwnHosts = new Set();

/** The hosts of site origins (`https://docs.example.com:8443` → `docs.example.com`); anything unreadable is left out. */
export function ownHostsOf(origins: readonly string[]): OwnHosts {
  const hosts = new Set<string>();
  for (const origin of origins) {
    try {
      // URL's host name is already IDNA ASCII and lower case, as referrerHost stores a host.
      const host = new URL(origin).hostname.replace(/\.$/, '');
      if (host !== '') hosts.add(host);
    } catch {}
  }
  return hosts;
}

/** THE rule: a stored referrer host that is one of the project's own is no referrer. */
export function isOwnHost(host: string | null, own: OwnHosts): boolean {
  return host !== null && own.has(host);
}

/** Drops (in place) the referrers of page views that came from the project's own pages (not-found views keep theirs). */
export function dropOwnReferrers(events: Pick<StoredEvent, 'referrer' | 'notFound'>[], own: OwnHosts): void {
  if (own.size === 0) return;
  for (const e of events) if (!e.notFound && isOwnHost(e.referrer, own)) e.referrer = null;
}

/** The same for an import batch's page views (its columns; its not-found views keep theirs). */
function dropOwnReferrersOfColumns(batch: ImportColumns, own: OwnHosts): void {
  const r = batch.referrer;
  if (r !== null) for (let i = 0; i < batch.n; i++) if (isOwnHost(r[i], own)) r[i] = null;
}

/** The engine as a log import sees it: each batch's own referrers dropped before it is written. */
export function withoutOwnReferrers(engine: AnalyticsEngine, own: OwnHosts): AnalyticsEngine {
  if (own.size === 0) return engine;
  // Everything else is the engine's own (its prototype); only writeImport is wrapped.
  return Object.assign(Object.create(engine) as AnalyticsEngine, {
    writeImport: (batch: ImportColumns) => {
      dropOwnReferrersOfColumns(batch, own);
      return engine.writeImport(batch);
    },
  });
}

/** How long a project's hosts are kept before they are read again: a settings change applies within this. */
export const OWN_HOSTS_TTL_MS = 10_000;

/** Each project's own hosts, read from its settings and kept for OWN_HOSTS_TTL_MS (one read per project, not per view). */
export class OwnHostsCache {
  private readonly cache: LRUCache<string, OwnHosts>;

  /** `siteOrigins`: the project's site origins; undefined when there is no such project. */
  constructor(siteOrigins: (projectId: string) => Promise<readonly string[] | undefined>) {
    this.cache = new LRUCache<string, OwnHosts>({
      max: 10_000,
      ttl: OWN_HOSTS_TTL_MS,
      fetchMethod: async (projectId) => ownHostsOf((await siteOrigins(projectId)) ?? []),
    });
  }

  async of(projectId: string): Promise<OwnHosts> {
    return (await this.cache.fetch(projectId)) ?? NO_OWN_HOSTS;
  }
}
