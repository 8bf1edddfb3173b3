import { describe, expect, it } from 'vitest';
import { cubeOf } from './log-cubes.ts';
import { type Entry, entryOf } from './log-index.ts';
import {
  placeOf,
  segmentCubeId,
  segmentDoc,
  segmentOf,
  segmentsCompleted,
  spanBlocks,
  spansOf,
} from './log-segments.ts';

const entry = (id: number, at: number): Entry =>
  entryOf({
    id,
    event_id: `e${id}`,
    created_at: at,
    type: 2,
    quota: 10,
    tokens: 1,
    user_id: 1,
    username: 'user1',
    token_name: 'default',
    model_name: 'gpt-4o',
    channel: 1,
    group: 'default',
  });

describe('log segments', () => {
  it('when an hour holds n logs, then its spans are the tail and each complete segment, newest first', () => {
    expect(spansOf(450, 200)).toEqual([
      { from: 400, to: 450 },
      { from: 200, to: 400, s: 1 },
      { from: 0, to: 200, s: 0 },
    ]);
    expect(spansOf(400, 200)).toEqual([
      { from: 200, to: 400, s: 1 },
      { from: 0, to: 200, s: 0 },
    ]);
    expect(spansOf(150, 200)).toEqual([{ from: 0, to: 150 }]);
    expect(spanBlocks({ from: 10_000, to: 20_000, s: 1 })).toEqual(Array.from({ length: 50 }, (_, i) => 50 + i));
    expect(spanBlocks({ from: 400, to: 450 })).toEqual([2]);
  });

  it('when a batch lists positions, then the segments it completed are those whose last position it wrote', () => {
    expect(segmentsCompleted(150, 250, 200)).toEqual([0]);
    expect(segmentsCompleted(0, 650, 200)).toEqual([0, 1, 2]);
    expect(segmentsCompleted(200, 399, 200)).toEqual([]);
    expect(segmentsCompleted(399, 400, 200)).toEqual([1]);
  });

  it("when a segment's cube is stored, then its times place it against a range", () => {
    const entries = [entry(1, 1_000), entry(2, 1_060), entry(3, 1_030)];
    const doc = segmentDoc('u1|5|q0', entries, cubeOf(entries, true));
    const seg = segmentOf(JSON.parse(JSON.stringify(doc)));
    expect(seg && { a: seg.a, z: seg.z, rows: seg.rows() }).toEqual({
      a: 1_000,
      z: 1_060,
      rows: cubeOf(entries, true),
    });
    expect(doc.n).toBe(3);
    // Keyed by its positions: a version with another segment size reads none of these as its own.
    expect(segmentCubeId('mgpt-4o', 5, { from: 10_000, to: 20_000 })).toBe('mgpt-4o|5|q10000-20000');
    expect(placeOf({ a: 1_000, z: 1_060 }, 900, 2_000)).toBe('in');
    expect(placeOf({ a: 1_000, z: 1_060 }, 1_061, 2_000)).toBe('out');
    expect(placeOf({ a: 1_000, z: 1_060 }, 0, 999)).toBe('out');
    expect(placeOf({ a: 1_000, z: 1_060 }, 1_030, 2_000)).toBe('cut');
    // An hour cube (no times) is not a segment's.
    expect(segmentOf({ _id: 'u1|5|q', n: '[[5,3]]', c: '[]' })).toBeUndefined();
  });
});
