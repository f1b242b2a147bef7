// The Idempotency-Key request header, read the same way by the job API and the events API.
import type { FastifyRequest } from 'fastify';
import { badRequest } from '../errors.ts';

/** 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key, or undefined without one; a malformed key is a 400. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters.', [
      { message: 'invalid Idempotency-Key', path: '/headers/idempotency-key' },
    ]);
  }
  return key;
}
