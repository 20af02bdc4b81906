// A relay that lies, for the sync specs: a proxy on 127.0.0.1 in front of a real relay
// that drops or withholds the messages it hands out to the devices using its address (posts and
// long polls pass through). A message's sender is in its clear header (bytes 9..24), so a rule can
// hold back one device's messages.
import { createServer } from 'node:http';

function frames(buf) {
  const out = [];
  for (let at = 0; at + 8 <= buf.length;) {
    const seq = buf.readUInt32BE(at);
    const len = buf.readUInt32BE(at + 4);
    out.push({ seq, bytes: buf.subarray(at + 8, at + 8 + len) });
    at += 8 + len;
  }
  return out;
}

const frame = (fs) =>
  Buffer.concat(
    fs.map((f) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(f.seq, 0);
      head.writeUInt32BE(f.bytes.length, 4);
      return Buffer.concat([head, f.bytes]);
    }),
  );

/** `lies.drop`: positions never handed out; `lies.holdBack`: { device (32 hex), after } holds back that device's messages past a position. */
export async function lyingRelay(target) {
  const lies = { drop: new Set(), holdBack: undefined };
  const server = createServer(async (req, res) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'x-last-seq' };
    if (req.method === 'OPTIONS') {
      res
        .writeHead(204, {
          ...cors,
          'access-control-allow-methods': 'GET, POST, DELETE',
          'access-control-allow-headers': 'content-type, x-tealeaf-key, x-tealeaf-time, x-tealeaf-nonce, x-tealeaf-sig',
        })
        .end();
      return;
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    let up;
    try {
      up = await fetch(`${target}${req.url}`, {
        method: req.method,
        // The room's signature passes through: the lies are in what comes back.
        headers: {
          'content-type': 'application/octet-stream',
          ...Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-tealeaf-'))),
        },
        body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
      });
    } catch {
      res.writeHead(502, cors).end();
      return;
    }
    let out = Buffer.from(await up.arrayBuffer());
    if (req.method === 'GET' && /\/messages\b/.test(req.url)) {
      const h = lies.holdBack;
      out = frame(
        frames(out).filter((f) => !lies.drop.has(f.seq) && !(h && f.seq > h.after && f.bytes.subarray(9, 25).toString('hex') === h.device)),
      );
    }
    const headers = { ...cors, 'content-type': up.headers.get('content-type') ?? 'application/octet-stream' };
    if (up.headers.get('x-last-seq')) headers['x-last-seq'] = up.headers.get('x-last-seq');
    res.writeHead(up.status, headers).end(out);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    lies,
    close: () => new Promise((ok) => (server.closeAllConnections(), server.close(ok))),
  };
}
