/**
 * Sums sent as doubles. The driver sends an integer that fits as a 32-bit one, and FerretDB keeps
 * the $inc of a 32-bit field in 32 bits, wrapping past 2^31: everyone's hour of 200,000 bench logs
 * read a quota of -1,272,302,947. A double is exact up to 2^53; a field stored before as a 32-bit
 * integer becomes a double at its next $inc.
 */
import { wideSum } from '@aigw/common';
import type { mongo } from 'mongoose';

/**
 * An $inc with its quota and token sums (keys ending `.q`, `.k` or `.t`: a directory's hour quota
 * and tokens, a second's tokens, a dashboard bucket's quota and tokens) as doubles; counts stay.
 */
export function wideSums(inc: Record<string, number>): Record<string, number | mongo.Double> {
  const out: Record<string, number | mongo.Double> = {};
  for (const [key, v] of Object.entries(inc)) out[key] = /\.[qkt]$/.test(key) ? wideSum(v) : v;
  return out;
}
