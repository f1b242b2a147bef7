/** The major version Folio needs. */
export declare const NODE_MAJOR: number;
/** A sentence saying how to run Folio when `version` (process.versions.node) is too old; null when it is fine. */
export declare function nodeVersionProblem(version: string): string | null;
