// Comparing a secret a client sent with the one expected: the one helper for it (setup and metrics
// tokens, CSRF tokens, GitLab's webhook token).

import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Whether `given` is `expected`, in a time that says nothing of either: both are hashed to the same
 * length first, so neither where they differ nor how long the expected one is leaks.
 */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
