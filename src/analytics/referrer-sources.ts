// Where readers come from, by the referring host: answers of AI assistants (ai_assistant), search
// engines, social sites, or other. The list is agents.json's `referrers` plus the operator's in
// FOLIO_AGENTS_FILE (checked first), in force as ClassificationRules' `sources` (classify.ts); a host
// matches itself and its subdomains, and an ai_assistant host may name its `company` (the AI-companies
// report). The reports turn it into their SQL (a host is a plain name: letters, digits, dots and
// dashes, so it is safe as a literal; a company is quoted).

export const SOURCE_CLASSES = ['ai_assistant', 'search', 'social', 'other'] as const;
export type SourceClass = (typeof SOURCE_CLASSES)[number];

export interface SourceRule {
  host: string;
  category: Exclude<SourceClass, 'other'>;
  /** Whose assistant answers from this host (ai_assistant hosts): the AI-companies report credits it with the readers. */
  company?: string;
}

const HOST = /^[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))+$/;

/** Checks a `referrers` list ({referrers: [...]}, optional); throws an Error with one clear sentence. */
export function parseSourceRules(json: unknown, where: string): SourceRule[] {
  const list = (json as { referrers?: unknown })?.referrers;
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.length > 10_000) throw new Error(`${where}: "referrers" must be a list of at most 10,000 {host, category}.`);
  return list.map((raw, i) => {
    const r = raw as Partial<SourceRule>;
    if (typeof r?.host !== 'string' || !HOST.test(r.host)) throw new Error(`${where}: referrers[${i}].host must be a host name in lower case, such as chatgpt.com.`);
    if (!SOURCE_CLASSES.slice(0, 3).includes(r.category as SourceClass)) throw new Error(`${where}: referrers[${i}].category must be ai_assistant, search or social.`);
    if (r.company !== undefined && (typeof r.company !== 'string' || r.company.length === 0 || r.company.length > 1024)) {
      throw new Error(`${where}: referrers[${i}].company must be a non-empty string of at most 1,024 characters.`);
    }
    return { host: r.host, category: r.category as SourceRule['category'], ...(r.company === undefined ? {} : { company: r.company }) };
  });
}
