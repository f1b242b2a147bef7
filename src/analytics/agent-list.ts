// Folio's own list of AI agents and referring sources (agents.json), read once: classify.ts takes
// its `agents`, referrer-sources.ts its `referrers`.
import { readFileSync } from 'node:fs';

export const AGENT_LIST: unknown = JSON.parse(readFileSync(new URL('./agents.json', import.meta.url), 'utf8'));
