// Host names as browsers read them (WHATWG URL: lower case, IDNA to ASCII, no trailing dot), one rule
// for both sides of the redirect allow-list: what a project lists (admin/projects.ts) and where a
// redirect leads (agent/checks), so a listed host and a redirect's host compare equal exactly when a
// browser would go to the same host.
import { isIP } from 'node:net';

/** The host of an absolute URL as a browser reads it; null when the text is no URL with a host. */
export function hostNameOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/\.$/, '') || null;
  } catch {
    // not a URL
    return null;
  }
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DNS_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/**
 * A DNS host name as a browser reads it (`Docs.Example.COM.` → `docs.example.com`, `bücher.example` →
 * `xn--bcher-kva.example`); null for anything else: a URL, a port, a path, user info, a wildcard, an
 * IP address, or more than 253 characters.
 */
export function dnsHostName(value: string): string | null {
  if (value.length === 0 || value.length > 253 || /[\s/\\?#@:%[\]*]/u.test(value)) return null;
  const host = hostNameOf(`https://${value}`);
  if (host === null || host.length > 253 || isIP(host) !== 0 || !DNS_NAME.test(host)) return null;
  return host;
}
