// Whether this Node can run Folio: plain JavaScript that every Node since 12 parses, so that an older
// system `node` says what to do in one sentence instead of a syntax error from the TypeScript sources
// (Node 24 strips their types itself; older ones cannot).

/** The major version Folio needs (package.json: the `node` dependency and `engines`). */
export const NODE_MAJOR = 24;

/** A sentence saying how to run Folio when `version` (process.versions.node) is too old; null when it is fine. */
export function nodeVersionProblem(version) {
  const major = Number(String(version).split('.')[0]);
  if (Number.isInteger(major) && major >= NODE_MAJOR) return null;
  return 'Folio needs Node ' + NODE_MAJOR + ' and this is Node ' + version +
    ': run it as `npx folio` in its folder (npm installed Node ' + NODE_MAJOR + ' there) or install Node ' + NODE_MAJOR + '.';
}
