// A DNS server on loopback that answers A queries from a table the test changes, as a container
// network's DNS answers service names with the addresses of the containers running now (nginx's
// `resolver` in deploy/nginx.conf asks it in the compose topology test). Other names: NXDOMAIN.
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';

export interface DnsServer {
  /** host:port, as nginx's `resolver` takes it. */
  readonly address: string;
  /** The addresses `name` resolves to from now on (none: NXDOMAIN). */
  set(name: string, addresses: string[]): void;
  /** How many queries for `name` were answered. */
  queries(name: string): number;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<DnsServer> {
  const table = new Map<string, string[]>();
  const asked = new Map<string, number>();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, peer) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // not DNS: no answer
    }
    const question = query.questions?.[0];
    const name = question?.name.toLowerCase() ?? '';
    asked.set(name, (asked.get(name) ?? 0) + 1);
    const addresses = question?.type === 'A' ? (table.get(name) ?? []) : [];
    const known = table.has(name);
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3), // rcode 3: NXDOMAIN
      questions: query.questions,
      answers: addresses.map((data) => ({ type: 'A' as const, class: 'IN' as const, name: question!.name, ttl: 1, data })),
    });
    socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    set: (name, addresses) => void table.set(name.toLowerCase(), addresses),
    queries: (name) => asked.get(name.toLowerCase()) ?? 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
