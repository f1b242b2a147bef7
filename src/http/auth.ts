// Bearer API keys: 401 for a missing, unknown, revoked or expired key; 403 for a key of another
// project or without the needed scope. Without an Authorization header, a dashboard operator's
// session cookie is accepted instead (every project, every scope; changes need the CSRF token).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyCovers, type ApiKeyStore, type KeyCheck, type StoredKey } from '../store/api-keys.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { sessionsFor } from './session.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: StoredKey;
    /** performance.now() when the request arrived: reads of the store made later may be shared. */
    receivedAt?: number;
  }
}

const REASONS: Record<string, [string, string]> = {
  missing: ['missing_api_key', 'Send an API key in the Authorization header: "Authorization: Bearer folio_…".'],
  malformed: ['invalid_api_key', 'The API key is not a Folio key; keys start with "folio_".'],
  unknown: ['invalid_api_key', 'The API key is not known to this server.'],
  revoked: ['revoked_api_key', 'The API key has been revoked.'],
  expired: ['expired_api_key', 'The API key has expired.'],
};

export type Scope = 'read' | 'write';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * A preHandler that admits a key of the path's project with at least `scope`, or an operator's
 * session. Callback style: a key the cache already knows is checked without a promise.
 */
export function requireKey(keys: ApiKeyStore, scope: Scope) {
  /** Throws the 401/403 for a key that may not make this request; notes the key on the request. */
  const admit = (request: FastifyRequest, check: KeyCheck): void => {
    if (!check.ok) throw unauthorized(...REASONS[check.reason]);
    const projectId = (request.params as { projectId?: string }).projectId;
    if (projectId !== undefined && !keyCovers(check.key, projectId)) {
      throw forbidden('wrong_project', 'This API key does not cover this project.');
    }
    if (scope === 'write' && check.key.scope !== 'write') {
      throw forbidden('insufficient_scope', 'This API key is read-only; this request needs a key with the write scope.');
    }
    request.apiKey = check.key;
  };

  const slowPath = async (request: FastifyRequest, header: string | undefined, token: string | undefined): Promise<void> => {
    if (header === undefined) {
      const sessions = sessionsFor(keys);
      const operator = sessions ? await sessions.fromRequest(request) : undefined;
      if (sessions && operator) {
        sessions.checkCsrf(request, operator.session);
        return;
      }
    }
    if (token === undefined) throw unauthorized(...REASONS.missing);
    admit(request, await keys.verify(token, request.receivedAt));
  };

  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    const header = request.headers.authorization;
    const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
    const cached = token === undefined ? undefined : keys.verifyCached(token, request.receivedAt);
    if (!cached) {
      slowPath(request, header, token).then(() => done(), done);
      return;
    }
    try {
      admit(request, cached);
    } catch (err) {
      return done(err as Error);
    }
    done();
  };
}
