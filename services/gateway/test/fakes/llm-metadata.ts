/**
 * A fake of the metadata site new-api syncs its model catalogue from (SYNC_UPSTREAM_BASE,
 * basellm.github.io/llm-metadata): `GET /api/newapi/models.json` and `/api/newapi/vendors.json`
 * (and the `/api/i18n/<locale>/newapi/...` copies) answer `{success, message, data: [...]}`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetadataModel {
  model_name: string;
  description: string;
  icon: string;
  tags: string;
  vendor_name: string;
  name_rule: number;
  status: number;
  endpoints?: unknown;
}
export interface MetadataVendor {
  name: string;
  description: string;
  icon: string;
  status: number;
}

export interface FakeMetadata {
  baseUrl: string;
  models: MetadataModel[];
  vendors: MetadataVendor[];
  /** Paths asked, in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function startFakeMetadata(): Promise<FakeMetadata> {
  const fake = { models: [], vendors: [], requests: [] } as unknown as FakeMetadata;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    fake.requests.push(path);
    const m = /^\/api\/(?:i18n\/[\w-]+\/)?newapi\/(models|vendors)\.json$/.exec(path);
    if (!m) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ success: true, message: '', data: m[1] === 'models' ? fake.models : fake.vendors }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}
