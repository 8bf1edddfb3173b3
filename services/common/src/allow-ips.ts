/**
 * A token's IP allow-list (reference-behaviour step 1): IPs or CIDRs, one per line or comma- or
 * space-separated. Shared by the relay and the tasks service.
 */
import { BlockList, isIP } from 'node:net';

/** Parses a token's allow_ips (IPs or CIDRs, one per line or comma-separated). */
export function parseAllowIps(text: string): BlockList | null {
  const entries = text
    .split(/[\n,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const e of entries) {
    const [addr = '', bits] = e.split('/');
    const family = isIP(addr);
    if (!family) continue;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits !== undefined) list.addSubnet(addr, Number(bits), type);
    else list.addAddress(addr, type);
  }
  return list;
}

/** Whether a client address passes a token's allow-list. */
export function ipAllowed(list: BlockList | null, ip: string): boolean {
  if (!list) return true;
  const addr = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(addr);
  if (!family) return false;
  return list.check(addr, family === 6 ? 'ipv6' : 'ipv4');
}
