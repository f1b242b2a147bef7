// Traffic classes, defined once: the names (classify.ts, the agents report), the numbers stored in
// `events.cls`, and the visitor bits of the daily tables' `mask` all come from CLASS_CODE.

/** Each class and its stored number (never renumber: stored rows keep them). */
export const CLASS_CODE = { human: 1, ai: 2, search: 3, training: 4, bot: 5 } as const;

export type TrafficClass = keyof typeof CLASS_CODE;
export type ClassCode = (typeof CLASS_CODE)[TrafficClass];

/** Stored number → class name. */
export const CLASS_NAME: Readonly<Record<number, TrafficClass>> = Object.fromEntries(Object.entries(CLASS_CODE).map(([name, code]) => [code, name as TrafficClass]));

/**
 * Only humans and AI count as visitors: classes with a code up to LAST_VISITOR_CODE. Their codes are
 * also their bits in `mask` (a key seen by both has mask 3), so a row's class is its mask as is.
 */
export const LAST_VISITOR_CODE = CLASS_CODE.ai;
export const HUMAN_BIT = CLASS_CODE.human;
export const AI_BIT = CLASS_CODE.ai;

/**
 * What the first-seen key rows (DuckDB daily_keys/daily_path_keys, ClickHouse seen_keys/seen_path_keys)
 * hold in `k`, by `kind`: the raw key, so source classes and companies are mapped at query time and
 * configured lists apply to stored rows. Never renumber: stored rows keep them.
 */
export const KEY_KIND = { host: 1, agent: 2 } as const;

/** The classes whose views are summed per agent (both engines' `daily_agents`): assistants and crawlers. */
export const AGENT_VIEW_CLASSES = [CLASS_CODE.ai, CLASS_CODE.search, CLASS_CODE.training].join(', ');
