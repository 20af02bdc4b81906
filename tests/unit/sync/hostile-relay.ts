// A relay that lies: a proxy in front of a real relay that drops,
// swaps or withholds the messages it hands out, for the devices that use its address. Posts and
// long polls pass through; each read of a room is rewritten by `rules`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface Lies {
  /** Positions never handed out. */
  drop: Set<number>;
  /** Pairs of positions handed out each in the other's place (when both are in one read). */
  swap: Array<[number, number]>;
}

interface Frame {
  seq: number;
  bytes: Buffer;
}

function frames(buf: Buffer): Frame[] {
  const out: Frame[] = [];
  for (let at = 0; at + 8 <= buf.length;) {
    const seq = buf.readUInt32BE(at);
    const len = buf.readUInt32BE(at + 4);
    out.push({ seq, bytes: buf.subarray(at + 8, at + 8 + len) });
    at += 8 + len;
  }
  return out;
}

function frame(fs: Frame[]): Buffer {
  return Buffer.concat(
    fs.map((f) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(f.seq, 0);
      head.writeUInt32BE(f.bytes.length, 4);
      return Buffer.concat([head, f.bytes]);
    }),
  );
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function lyingRelay(target: string, lies: Lies = { drop: new Set(), swap: [] }) {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = `${target}${req.url}`;
      // The room's signature passes through: the lie is in what comes back, not in what is sent.
      const signed = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-tealeaf-'))) as Record<string, string>;
      const init: RequestInit = { method: req.method, headers: { 'content-type': 'application/octet-stream', ...signed } };
      if (req.method === 'POST') init.body = new Uint8Array(await body(req));
      let up: Response;
      try {
        up = await fetch(url, init);
      } catch {
        res.writeHead(502).end();
        return;
      }
      let out: Buffer = Buffer.from(await up.arrayBuffer());
      if (req.method === 'GET' && /\/messages\b/.test(req.url ?? '')) {
        let fs = frames(out).filter((f) => !lies.drop.has(f.seq));
        for (const [a, b] of lies.swap) {
          const i = fs.findIndex((f) => f.seq === a);
          const j = fs.findIndex((f) => f.seq === b);
          if (i >= 0 && j >= 0) {
            const [x, y] = [fs[i].bytes, fs[j].bytes];
            fs = fs.map((f, k) => (k === i ? { seq: a, bytes: y } : k === j ? { seq: b, bytes: x } : f));
          }
        }
        out = frame(fs);
      }
      const headers: Record<string, string> = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'x-last-seq' };
      const last = up.headers.get('x-last-seq');
      if (last) headers['x-last-seq'] = last;
      headers['content-type'] = up.headers.get('content-type') ?? 'application/octet-stream';
      res.writeHead(up.status, headers).end(out);
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    lies,
    close: () => new Promise<void>((ok) => (server.closeAllConnections(), server.close(() => ok()))),
  };
}
