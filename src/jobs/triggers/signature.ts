// Verifying a webhook delivery the way its host signs it. Both comparisons take the same time
// whatever the input: GitHub's HMAC digests are compared with timingSafeEqual, and GitLab's token
// is compared through fixed-length SHA-256 digests of both sides.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const GITHUB_SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** GitHub and GitHub Enterprise Server: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`. */
export function verifyGitHub(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  const m = header === undefined ? null : GITHUB_SIGNATURE.exec(header.trim());
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(m[1], 'hex'));
}

/** True when the header has the shape of a GitHub signature (checked before the body is read). */
export function wellFormedGitHubSignature(header: string | undefined): boolean {
  return header !== undefined && GITHUB_SIGNATURE.test(header.trim());
}

/** GitLab: `X-Gitlab-Token` carries the secret itself. */
export function verifyGitLab(secret: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(header), digest(secret));
}

/** What a sender puts in X-Hub-Signature-256 (tests, docs). */
export function signGitHub(secret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}
