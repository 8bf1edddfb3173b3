/**
 * The relay's durable usage spool: every usage event is appended to a segment file in its own
 * directory (one per relay replica: a Kubernetes emptyDir, a folder of `npm start`'s state) before
 * the hot path goes on, and a segment is deleted once Kafka has acknowledged all of its events.
 * An append is one write(2) into the page cache: it survives the process being killed (kill -9,
 * an OOM kill, a crash), not the machine losing power. The next process with the directory reads
 * what is left and publishes it again; consumers drop events they already handled (billing's
 * settle and the logs' ingest are idempotent per request id), so an answered request is billed
 * exactly once even when its event had been published just before the kill.
 *
 * Segment files hold frames of [u32 key length][u32 headers length][u32 value length][key][headers
 * JSON][value]; a frame cut short by a kill ends the segment.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@aigw/common';

export interface SpoolMessage {
  key: string;
  value: Buffer;
  headers?: Record<string, string>;
}

/** One segment file: its events count as written until Kafka acknowledges them. */
export interface SpoolSegment {
  readonly file: string;
  written: number;
  acked: number;
  /** No more events go into it (rotated, or left by an earlier process). */
  sealed: boolean;
}

export interface UsageSpool {
  /** Appends one event; returns the segment it went into. */
  append(msg: SpoolMessage): SpoolSegment;
  /** Kafka acknowledged one event of each of these segments (one entry per event). */
  acked(segments: readonly SpoolSegment[]): void;
  /** Events an earlier process left unacknowledged, oldest first, each with its segment. */
  recover(): { msg: SpoolMessage; seg: SpoolSegment }[];
  /** Closes the current segment; unacknowledged files stay for the next process. */
  close(): void;
}

const HEADER = 12;
/** A segment is sealed after this many events or this long, so acknowledged ones can go. */
const SEGMENT_EVENTS = 5_000;
const SEGMENT_MS = 1_000;

function frame(msg: SpoolMessage): Buffer {
  const key = Buffer.from(msg.key);
  const headers = msg.headers ? Buffer.from(JSON.stringify(msg.headers)) : Buffer.alloc(0);
  const out = Buffer.allocUnsafe(HEADER + key.length + headers.length + msg.value.length);
  out.writeUInt32LE(key.length, 0);
  out.writeUInt32LE(headers.length, 4);
  out.writeUInt32LE(msg.value.length, 8);
  key.copy(out, HEADER);
  headers.copy(out, HEADER + key.length);
  msg.value.copy(out, HEADER + key.length + headers.length);
  return out;
}

/** The whole frames of a segment file; a frame cut short (the process was killed mid-write) ends it. */
export function readFrames(buf: Buffer): SpoolMessage[] {
  const out: SpoolMessage[] = [];
  let at = 0;
  while (at + HEADER <= buf.length) {
    const k = buf.readUInt32LE(at);
    const h = buf.readUInt32LE(at + 4);
    const v = buf.readUInt32LE(at + 8);
    const end = at + HEADER + k + h + v;
    if (end > buf.length) break;
    const key = buf.toString('utf8', at + HEADER, at + HEADER + k);
    const headersText = buf.toString('utf8', at + HEADER + k, at + HEADER + k + h);
    let headers: Record<string, string> | undefined;
    try {
      headers = h ? (JSON.parse(headersText) as Record<string, string>) : undefined;
    } catch {
      break; // not a frame this module wrote
    }
    const value = Buffer.from(buf.subarray(at + HEADER + k + h, end));
    out.push(headers ? { key, value, headers } : { key, value });
    at = end;
  }
  return out;
}

/**
 * Opens the spool in `dir` (created if missing). One process per directory: a lock file names the
 * owner, and a directory held by another live process is refused (two replicas must not share one).
 */
export function openUsageSpool(dir: string, logger: Logger): UsageSpool {
  mkdirSync(dir, { recursive: true });
  takeLock(dir);
  let current: (SpoolSegment & { fd: number; openedAt: number }) | undefined;
  let seq = 0;

  const unlinkIfDone = (seg: SpoolSegment) => {
    if (!seg.sealed || seg.acked < seg.written) return;
    try {
      unlinkSync(seg.file);
    } catch (err) {
      logger.warn({ err, file: seg.file }, 'usage spool segment not removed');
    }
  };
  const seal = () => {
    if (!current) return;
    closeSync(current.fd);
    current.sealed = true;
    const done = current;
    current = undefined;
    unlinkIfDone(done);
  };

  return {
    append(msg) {
      const now = Date.now();
      if (current && (current.written >= SEGMENT_EVENTS || now - current.openedAt >= SEGMENT_MS)) seal();
      if (!current) {
        const file = join(dir, `usage-${now}-${process.pid}-${seq++}.seg`);
        current = { file, fd: openSync(file, 'a'), openedAt: now, written: 0, acked: 0, sealed: false };
      }
      writeSync(current.fd, frame(msg));
      current.written++;
      return current;
    },
    acked(list) {
      for (const seg of list) {
        seg.acked++;
        unlinkIfDone(seg);
      }
    },
    recover() {
      const files = readdirSync(dir)
        .filter((f) => f.endsWith('.seg'))
        .sort((a, b) => Number(a.split('-')[1]) - Number(b.split('-')[1]) || a.localeCompare(b));
      const out: { msg: SpoolMessage; seg: SpoolSegment }[] = [];
      for (const name of files) {
        const file = join(dir, name);
        if (current?.file === file) continue;
        const msgs = readFrames(readFileSync(file));
        const seg: SpoolSegment = { file, written: msgs.length, acked: 0, sealed: true };
        for (const msg of msgs) out.push({ msg, seg });
        unlinkIfDone(seg); // an empty file (killed before its first write)
      }
      if (out.length > 0)
        logger.warn(
          { events: out.length, segments: files.length },
          'usage events left by an earlier process: publishing them',
        );
      return out;
    },
    close() {
      seal();
      releaseLock(dir);
    },
  };
}

function lockFile(dir: string): string {
  return join(dir, 'owner.lock');
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function takeLock(dir: string): void {
  const file = lockFile(dir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(file, 'utf8'));
      // Our own pid: a container restarted with the same pid (1), or this process opened it before.
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner))
        throw new Error(
          `usage spool ${dir} is used by process ${owner}: give each relay its own RELAY_USAGE_SPOOL_DIR`,
        );
      unlinkSync(file); // left by a process that died
    }
  }
  throw new Error(`usage spool ${dir}: could not take the lock`);
}

function releaseLock(dir: string): void {
  try {
    if (Number(readFileSync(lockFile(dir), 'utf8')) === process.pid) unlinkSync(lockFile(dir));
  } catch {
    // already gone
  }
}
