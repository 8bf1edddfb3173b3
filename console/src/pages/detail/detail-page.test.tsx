// @vitest-environment happy-dom
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { QuotaData } from '../../api/log.ts';
import { configureApi } from '../../api/request.ts';
import { UserProvider } from '../../store/user-context.tsx';
import DetailPage from './index.tsx';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const hour = Math.floor(Date.now() / 1000 / 3600) * 3600 - 3600;
const row = (model_name: string, quota: number): QuotaData => ({
  created_at: hour,
  model_name,
  user_id: 2,
  username: 'u',
  token_used: 100,
  count: 1,
  quota,
});

/** The dashboard panels the admins set (GET /api/console/panels); empty unless a test sets them. */
let panels: Record<string, unknown> = {
  announcements_enabled: true,
  announcements: [],
  api_info_enabled: true,
  api_info: [],
  faq_enabled: true,
  faq: [],
  uptime_kuma_enabled: false,
};

/** A stand-in for the gateway's GET /api/data/self: a small hour of usage (1200 quota, $0.0024). */
function startDataServer(): Promise<Server> {
  const server = createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Access-Control-Allow-Headers', 'New-Api-User, Content-Type');
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url === '/api/console/panels') {
      res.end(JSON.stringify({ success: true, message: '', data: panels }));
      return;
    }
    if (req.url === '/api/uptime/status') {
      const monitors = [{ name: 'OpenAI', uptime: 0.99875, status: 1, group: 'Models' }];
      res.end(JSON.stringify({ success: true, message: '', data: [{ categoryName: 'Core', monitors }] }));
      return;
    }
    res.end(JSON.stringify({ success: true, message: '', data: [row('gpt-4o', 900), row('gpt-4o-mini', 300)] }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('the data dashboard', () => {
  let server: Server;
  let root: Root | undefined;
  beforeAll(async () => {
    server = await startDataServer();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  afterEach(() => {
    act(() => root?.unmount());
    document.body.innerHTML = '';
  });

  it('when the usage is a fraction of a cent, then the quota axis reads distinct dollar amounts', async () => {
    const { port } = server.address() as AddressInfo;
    configureApi({ baseUrl: `http://127.0.0.1:${port}` });
    const container = document.createElement('div');
    document.body.append(container);
    root = createRoot(container);
    await act(async () =>
      root?.render(
        <UserProvider>
          <DetailPage />
        </UserProvider>,
      ),
    );
    const deadline = Date.now() + 4000;
    while (!container.querySelector('svg.aigw-chart') && Date.now() < deadline) {
      await act(() => new Promise((resolve) => setTimeout(resolve, 20)));
    }
    const quotaChart = container.querySelector('svg.aigw-chart');
    const ticks = [...(quotaChart?.querySelectorAll('text[text-anchor="end"]') ?? [])].map((t) => t.textContent);
    expect(ticks).toEqual(['$0.0000', '$0.0012', '$0.0024']);
    const bars = [...(quotaChart?.querySelectorAll('rect > title') ?? [])].map((t) => t.textContent);
    expect(bars).toEqual(['gpt-4o: $0.0018', 'gpt-4o-mini: $0.00060']);
  });

  it('when the admins set announcements, API info, FAQ and status pages, then the dashboard shows them under the charts', async () => {
    const { port } = server.address() as AddressInfo;
    configureApi({ baseUrl: `http://127.0.0.1:${port}` });
    panels = {
      announcements_enabled: true,
      announcements: [{ content: 'Maintenance tonight', publishDate: '2025-06-01T00:00:00Z', type: 'warning' }],
      api_info_enabled: true,
      api_info: [{ url: 'https://api.example.com', route: 'Main', description: 'Direct', color: 'blue' }],
      faq_enabled: true,
      faq: [{ question: 'How do I top up?', answer: 'On the wallet page.' }],
      uptime_kuma_enabled: true,
    };
    const container = document.createElement('div');
    document.body.append(container);
    root = createRoot(container);
    await act(async () =>
      root?.render(
        <UserProvider>
          <DetailPage />
        </UserProvider>,
      ),
    );
    const deadline = Date.now() + 4000;
    while (!container.textContent?.includes('OpenAI') && Date.now() < deadline) {
      await act(() => new Promise((resolve) => setTimeout(resolve, 20)));
    }
    const text = container.querySelector('.aigw-detail-panels')?.textContent ?? '';
    for (const s of ['Maintenance tonight', 'https://api.example.com', 'Direct', 'How do I top up?', 'Core', 'OpenAI'])
      expect(text).toContain(s);
    expect(text).toContain('99.88%');
  });
});
