#!/usr/bin/env node
// Dependency-free readiness probes for the local infrastructure, used by deploy/local/bin/infra.sh.
//
//   node probe.mjs mongo 127.0.0.1:27027   -> OP_MSG {ping: 1} answered with ok: 1
//   node probe.mjs kafka 127.0.0.1:9094    -> Metadata (v1) answered with at least one broker
//   node probe.mjs redis 127.0.0.1:6390    -> PING answered with +PONG
//
// Exit code 0 when the server answered as expected, 1 otherwise (reason on stderr).
// Each probe gives up after PROBE_TIMEOUT_MS (default 2000 ms).
import net from 'node:net';

const [kind, address] = process.argv.slice(2);
const timeoutMs = Number(process.env.PROBE_TIMEOUT_MS ?? 2000);

/** Opens a TCP connection, sends `request`, resolves with the bytes once `isComplete(bytes)` says so. */
function exchange(hostPort, request, isComplete) {
  const idx = hostPort.lastIndexOf(':');
  const host = hostPort.slice(0, idx);
  const port = Number(hostPort.slice(idx + 1));
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`timeout after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (isComplete(buf)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(buf);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      reject(new Error('connection closed before a full answer'));
    });
  });
}

/** Length-prefixed frames (Kafka: int32 size excluding itself; MongoDB: int32 size including itself). */
const framed = (includesSelf) => (buf) => buf.length >= 4 && buf.length >= buf.readInt32BE(0) + (includesSelf ? 0 : 4);

function bsonPing() {
  // {ping: 1 (int32), $db: "admin"}
  const parts = [];
  const el = (type, name, value) => {
    parts.push(Buffer.from([type]), Buffer.from(`${name}\0`, 'utf8'), value);
  };
  const i32 = Buffer.alloc(4);
  i32.writeInt32LE(1);
  el(0x10, 'ping', i32);
  const str = Buffer.from('admin\0', 'utf8');
  const len = Buffer.alloc(4);
  len.writeInt32LE(str.length);
  el(0x02, '$db', Buffer.concat([len, str]));
  const body = Buffer.concat(parts);
  const doc = Buffer.alloc(4 + body.length + 1);
  doc.writeInt32LE(doc.length);
  body.copy(doc, 4);
  return doc;
}

async function probeMongo(hostPort) {
  const doc = bsonPing();
  // MsgHeader (16) + flagBits (4) + section kind 0 (1) + document
  const msg = Buffer.alloc(16 + 4 + 1 + doc.length);
  msg.writeInt32LE(msg.length, 0);
  msg.writeInt32LE(1, 4); // requestID
  msg.writeInt32LE(0, 8); // responseTo
  msg.writeInt32LE(2013, 12); // OP_MSG
  msg.writeUInt32LE(0, 16);
  msg.writeUInt8(0, 20);
  doc.copy(msg, 21);
  const res = await exchange(hostPort, msg, (b) => b.length >= 4 && b.length >= b.readInt32LE(0));
  if (res.readInt32LE(12) !== 2013) throw new Error('not an OP_MSG answer');
  // Look for element "ok" as double 1.0 or int32 1 in the reply document.
  const reply = res.subarray(21);
  const okDouble = Buffer.concat([
    Buffer.from([0x01]),
    Buffer.from('ok\0'),
    Buffer.from([0, 0, 0, 0, 0, 0, 0xf0, 0x3f]),
  ]);
  const okInt = Buffer.concat([Buffer.from([0x10]), Buffer.from('ok\0'), Buffer.from([1, 0, 0, 0])]);
  if (reply.indexOf(okDouble) < 0 && reply.indexOf(okInt) < 0) throw new Error('ping did not answer ok: 1');
  return 'ping ok';
}

async function probeKafka(hostPort) {
  // Metadata request v1: header (api_key 3, api_version 1, correlation_id, client_id), topics = null (all).
  const clientId = Buffer.from('infra-probe');
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4);
  let o = 0;
  o = body.writeInt16BE(3, o);
  o = body.writeInt16BE(1, o);
  o = body.writeInt32BE(42, o);
  o = body.writeInt16BE(clientId.length, o);
  o += clientId.copy(body, o);
  body.writeInt32BE(-1, o);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  const res = await exchange(hostPort, Buffer.concat([size, body]), framed(false));
  let p = 4;
  if (res.readInt32BE(p) !== 42) throw new Error('wrong correlation id');
  p += 4;
  const brokers = res.readInt32BE(p);
  p += 4;
  const seen = [];
  for (let i = 0; i < brokers; i++) {
    const nodeId = res.readInt32BE(p);
    p += 4;
    const hostLen = res.readInt16BE(p);
    p += 2;
    const host = res.toString('utf8', p, p + hostLen);
    p += hostLen;
    const port = res.readInt32BE(p);
    p += 4;
    const rackLen = res.readInt16BE(p);
    p += 2 + Math.max(rackLen, 0);
    seen.push(`${nodeId}@${host}:${port}`);
  }
  if (brokers < 1) throw new Error('metadata lists no broker yet');
  const controllerId = res.readInt32BE(p);
  if (controllerId < 0) throw new Error('no active controller yet');
  return `brokers ${seen.join(',')}`;
}

async function probeRedis(hostPort) {
  const res = await exchange(hostPort, Buffer.from('PING\r\n'), (b) => b.includes('\r\n'));
  const line = res.toString('utf8').trim();
  if (line !== '+PONG') throw new Error(`unexpected answer ${JSON.stringify(line)}`);
  return 'PONG';
}

const probes = { mongo: probeMongo, kafka: probeKafka, redis: probeRedis };
const probe = probes[kind];
if (!probe || !address) {
  console.error('usage: probe.mjs mongo|kafka|redis host:port');
  process.exit(2);
}
try {
  const what = await probe(address);
  if (process.env.PROBE_VERBOSE) console.error(`${kind} ${address}: ${what}`);
  process.exit(0);
} catch (err) {
  if (process.env.PROBE_VERBOSE) console.error(`${kind} ${address}: ${err.message}`);
  process.exit(1);
}
