import { RatiosSchema, UsageEventSchema } from '@aigw/proto/events/v1/events';
import { create, type DescField, type DescMessage, fromBinary, ScalarType, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { encodeUsageEvent, ProtoWriter, type UsageEventFields } from './usage-encoder.ts';

/** A deterministic pseudo-random source (the failures must be reproducible). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const TEXTS = ['', 'a', 'gpt-4o-mini', '默认分组', 'emoji 🚀 mixed', 'x'.repeat(300), 'quote " and \\ back'];

/** A value for every field of a message, read from the generated schema (so new fields are covered). */
function fill(desc: DescMessage, next: () => number, zeroChance: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of desc.fields) out[f.localName] = fieldValue(f, next, zeroChance);
  return out;
}

function scalar(t: ScalarType, next: () => number, zeroChance: number): unknown {
  const zero = next() < zeroChance;
  switch (t) {
    case ScalarType.STRING:
      return zero ? '' : (TEXTS[1 + Math.floor(next() * (TEXTS.length - 1))] as string);
    case ScalarType.DOUBLE: {
      if (zero) return 0;
      const pick = next();
      if (pick < 0.1) return -0;
      if (pick < 0.4) return Math.floor(next() * 2 ** 53) * (next() < 0.2 ? -1 : 1);
      return (next() - 0.3) * 10 ** Math.floor(next() * 12);
    }
    case ScalarType.INT32: {
      if (zero) return 0;
      const pick = next();
      if (pick < 0.2) return -Math.floor(next() * 2 ** 31);
      if (pick < 0.3) return 2 ** 31 - 1;
      if (pick < 0.35) return -(2 ** 31);
      return Math.floor(next() * 2 ** Math.floor(next() * 31));
    }
    case ScalarType.BOOL:
      return !zero;
    default:
      throw new Error(`the usage encoder does not handle scalar type ${ScalarType[t]}: extend it and this test`);
  }
}

function fieldValue(f: DescField, next: () => number, zeroChance: number): unknown {
  switch (f.fieldKind) {
    case 'scalar':
      return scalar(f.scalar, next, zeroChance);
    case 'list': {
      if (f.listKind !== 'scalar') throw new Error(`unhandled list field ${f.name}`);
      const n = next() < zeroChance ? 0 : Math.floor(next() * 5);
      return Array.from({ length: n }, () => scalar(f.scalar, next, 0));
    }
    case 'message':
      if (next() < zeroChance / 2) return undefined;
      return fill(f.message, next, next() < 0.2 ? 1 : zeroChance);
    case 'enum':
      // An enum is an int32 on the wire (the encoder writes it so); proto3 enums are open, so any
      // int32 may arrive besides the declared values.
      if (next() < zeroChance) return 0;
      if (next() < 0.7) return f.enum.values[Math.floor(next() * f.enum.values.length)]?.number ?? 0;
      return scalar(ScalarType.INT32, next, zeroChance);
    default:
      throw new Error(`the usage encoder does not handle ${f.fieldKind} field ${f.name}: extend it and this test`);
  }
}

describe('UsageEvent encoder', () => {
  it('when every field of the schema is set, then the bytes are exactly protobuf-es’s', () => {
    const next = rng(1);
    const w = new ProtoWriter(256);
    const ev = fill(UsageEventSchema, next, 0) as unknown as UsageEventFields;
    const mine = encodeUsageEvent(w, ev);
    expect(Buffer.from(mine).toString('hex')).toBe(
      Buffer.from(toBinary(UsageEventSchema, create(UsageEventSchema, ev))).toString('hex'),
    );
  });

  it('when 2,000 random events (zeros, negatives, -0, unicode, no ratios) share one writer, then each matches and decodes back', () => {
    const next = rng(42);
    // A small initial buffer forces many regrowths: earlier views must stay intact.
    const w = new ProtoWriter(64);
    const made: { ev: UsageEventFields; bytes: Buffer }[] = [];
    for (let i = 0; i < 2000; i++) {
      const ev = fill(UsageEventSchema, next, 0.4) as unknown as UsageEventFields;
      made.push({ ev, bytes: encodeUsageEvent(w, ev) });
    }
    for (const { ev, bytes } of made) {
      const expected = toBinary(UsageEventSchema, create(UsageEventSchema, ev));
      expect(Buffer.from(bytes).equals(Buffer.from(expected))).toBe(true);
      const back = fromBinary(UsageEventSchema, bytes);
      expect(back.requestId).toBe(ev.requestId);
      expect(back.promptTokens).toBe(ev.promptTokens);
      expect(back.channelsTried).toEqual(ev.channelsTried);
    }
  });

  it('when ratios are set but all zero, then the empty message is still present (as protobuf-es writes it)', () => {
    const ev = {
      ...(fill(UsageEventSchema, rng(7), 1) as unknown as UsageEventFields),
      ratios: fill(RatiosSchema, rng(8), 1) as unknown as UsageEventFields['ratios'],
    };
    const mine = encodeUsageEvent(new ProtoWriter(), ev);
    expect(Buffer.from(mine).toString('hex')).toBe('aa0100');
    expect(fromBinary(UsageEventSchema, mine).ratios).toBeDefined();
  });
});
