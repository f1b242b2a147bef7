// Folio's version, read once from package.json: the one place the API reference, the OpenAPI
// document and `folio --version` take it from, so a release changes it in package.json only.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };

export const FOLIO_VERSION: string = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
