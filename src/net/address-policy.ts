// Which network addresses Folio may connect to on behalf of a user-configured URL (webhooks, a
// repository's host, the code-host API derived from it): public unicast addresses only, unless the
// operator lists a network in FOLIO_OUTBOUND_ALLOW. Loopback, private, link-local (cloud metadata at
// 169.254.169.254), unique-local, carrier-grade NAT, multicast and reserved ranges are refused, also
// when spelled as IPv4-mapped IPv6 or another notation of the same number.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { CodedError } from '../errors.ts';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface OutboundPolicy {
  /** Networks allowed although not public (CIDRs or single addresses), from FOLIO_OUTBOUND_ALLOW. */
  readonly allow: readonly string[];
}

/** A name resolver: every address of a host name (tests map names to chosen addresses). */
export type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export class OutboundRefusedError extends CodedError {
  constructor(message: string) {
    super('outbound_address_refused', message);
  }
}

/** A host name with no address (yet): not a refusal, and worth trying again later. */
export class UnresolvedHostError extends CodedError {
  constructor(host: string) {
    super('host_not_resolved', `The host name ${host} could not be resolved.`);
  }
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address (cloud metadata services live there)',
  uniqueLocal: 'a unique-local address',
  unspecified: 'the unspecified address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
};

/** Parses one allow-list entry; throws with a sentence for anything that is not a CIDR or an address. */
export function parseNetwork(entry: string): [Address, number] {
  const s = entry.trim();
  if (ipaddr.isValidCIDR(s)) return ipaddr.parseCIDR(s);
  if (ipaddr.isValid(s)) {
    const a = ipaddr.parse(s);
    return [a, a.kind() === 'ipv4' ? 32 : 128];
  }
  throw new Error(`"${entry}" is not an address or a CIDR network such as 10.0.0.0/8.`);
}

const parsed = new WeakMap<OutboundPolicy, [Address, number][]>();

function allowed(addr: Address, policy: OutboundPolicy): boolean {
  let networks = parsed.get(policy);
  if (!networks) parsed.set(policy, (networks = policy.allow.map(parseNetwork)));
  return networks.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}

/** Null when Folio may connect to `ip`; otherwise why not, as a phrase ("a loopback address"). */
export function refusal(ip: string, policy: OutboundPolicy): string | null {
  const bare = ip.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'not an IP address';
  // IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it is.
  const addr = ipaddr.process(bare);
  if (allowed(addr, policy)) return null;
  const range = addr.range();
  if (range === 'unicast') return null;
  return RANGE_NAMES[range] ?? `a reserved address (${range})`;
}

function refusedError(host: string, ip: string, why: string): OutboundRefusedError {
  const shown = host === ip ? ip : `${host} (${ip})`;
  return new OutboundRefusedError(`${shown} is ${why}; Folio does not connect there unless the operator allows that network (FOLIO_OUTBOUND_ALLOW).`);
}

/**
 * Resolves `host` and returns the address to connect to; throws OutboundRefusedError when the host
 * is a refused address or any of its addresses is (a name with one public and one internal address
 * could be switched between them).
 */
export async function resolveAllowed(host: string, policy: OutboundPolicy, resolve: Resolve = systemResolve): Promise<{ address: string; family: number }> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) {
    const why = refusal(bare, policy);
    if (why) throw refusedError(bare, bare, why);
    return { address: bare, family: isIP(bare) };
  }
  if (bare === 'localhost' || bare.endsWith('.localhost')) throw refusedError(bare, '127.0.0.1', RANGE_NAMES.loopback);
  let addresses: { address: string; family: number }[];
  try {
    addresses = await resolve(bare);
  } catch {
    throw new UnresolvedHostError(bare);
  }
  if (addresses.length === 0) throw new UnresolvedHostError(bare);
  for (const a of addresses) {
    const why = refusal(a.address, policy);
    if (why) throw refusedError(bare, a.address, why);
  }
  return addresses[0];
}

/**
 * The check made when a URL is saved: literal addresses and names that resolve to refused addresses
 * get a sentence; a name that does not resolve (yet) passes, since delivery checks again at connect time.
 */
export async function checkUrlHost(url: URL, policy: OutboundPolicy, resolve: Resolve = systemResolve): Promise<void> {
  try {
    await resolveAllowed(url.hostname, policy, resolve);
  } catch (err) {
    if (err instanceof UnresolvedHostError) return;
    throw err;
  }
}
