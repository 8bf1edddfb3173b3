/**
 * Outbound calls to URLs someone else chose (a task's notifyHook, an admin's Uptime Kuma status
 * page) must not reach inside the cluster: `isPublicAddress` refuses loopback, private, link-local
 * (cloud metadata), carrier-grade NAT, multicast and reserved addresses, and `publicOnlyLookup`,
 * given as a request's `lookup`, applies it to what a name resolves to in the connection's own DNS
 * lookup, so the address checked is the address connected to.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { plainAddress } from './http.ts';

const NOT_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(net, bits, 'ipv6');

/** Whether an address is on the public internet (an IPv4-mapped IPv6 address is judged as IPv4). */
export function isPublicAddress(address: string): boolean {
  const a = plainAddress(address);
  const family = isIP(a);
  return family !== 0 && !NOT_PUBLIC.check(a, family === 6 ? 'ipv6' : 'ipv4');
}

/** A name or literal that is not a public address (`code` EPRIVATEADDRESS). */
export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
  constructor(host: string, address: string) {
    super(`${host} is ${address}, not a public address`);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that refuses non-public answers (both the single and the `all` form net.connect uses). */
export function publicOnlyLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, options.all ? [] : '', 0);
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) return callback(new PrivateAddressError(hostname, bad.address), options.all ? [] : '', 0);
    const first = addresses[0] as LookupAddress;
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  });
}
