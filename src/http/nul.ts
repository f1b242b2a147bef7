// No store keeps NUL in text (PostgreSQL refuses it), so requests carrying one are refused up front.
import type { FastifyRequest } from 'fastify';
import { badRequest } from '../errors.ts';

/** The JSON pointer of the first string (or key) containing NUL, or null. */
export function nulPath(value: unknown, at: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\0') ? at || '/' : null;
  if (value === null || typeof value !== 'object' || depth > 32) return null;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return `${at}/${k.replaceAll('\0', '\\0')}`;
    const found = nulPath(v, `${at}/${k}`, depth + 1);
    if (found) return found;
  }
  return null;
}

/** A preValidation hook: refuses a body with NUL in any string (400 invalid_request, with where). */
export async function refuseNulInBody(request: FastifyRequest): Promise<void> {
  const where = nulPath(request.body, '/body');
  if (where) throw badRequest('invalid_request', 'Text must not contain NUL characters (\\u0000).', [{ message: 'contains NUL', path: where }]);
}
