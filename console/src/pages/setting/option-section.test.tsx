// @vitest-environment happy-dom
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureApi } from '../../api/request.ts';
import OptionSection from './option-section.tsx';
import type { SectionSpec } from './sections.ts';

const section: SectionSpec = {
  id: 'mixed',
  title: 'setting.operation',
  fields: [
    { key: 'SystemName', label: 'opt.systemName2', kind: 'text' },
    { key: 'QuotaPerUnit', label: 'opt.quotaPerDollar', kind: 'number', min: 1 },
    {
      key: 'DataExportDefaultTime',
      label: 'opt.defaultDashboardGranularity',
      kind: 'select',
      choices: [
        ['hour', 'detail.hour'],
        ['day', 'detail.day'],
      ],
    },
    { key: 'ModelRatio', label: 'log.modelRatio', kind: 'json' },
    { key: 'SensitiveWords', label: 'opt.sensitiveWords2', kind: 'textarea' },
    { key: 'LogConsumeEnabled', label: 'opt.logQuotaConsumption', kind: 'switch' },
  ],
};

const saved = {
  SystemName: '我的网关',
  QuotaPerUnit: '250000',
  DataExportDefaultTime: 'day',
  ModelRatio: '{"gpt-4":15,"gpt-3.5-turbo":0.75}',
  SensitiveWords: 'foo\nbar',
  LogConsumeEnabled: 'true',
};

/** A stand-in for the gateway's PUT /api/option/ that records what the console sent. */
const puts: { key: string; value: string }[] = [];
function startOptionServer(): Promise<Server> {
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => resolve(body));
    });
  const server = createServer(async (req, res) => {
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Access-Control-Allow-Methods', 'GET, PUT');
    res.setHeader('Access-Control-Allow-Headers', 'New-Api-User, Content-Type');
    if (req.method === 'OPTIONS') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.method === 'PUT') puts.push(JSON.parse(await read(req)) as { key: string; value: string });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ success: true, message: '' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 4000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Types into an input the way a browser reports it to React. */
function type(element: HTMLInputElement | HTMLTextAreaElement, text: string) {
  const proto = element instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(element, text);
  element.dispatchEvent(new Event('input', { bubbles: true }));
}

// React's act() warns unless the test declares itself an act environment.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

describe('a settings section', () => {
  let server: Server;
  let root: Root | undefined;
  let container: HTMLElement;
  const field = (key: string) => container.querySelector(`[data-option="${key}"]`) as HTMLElement;
  const input = (key: string) => field(key).querySelector('input, textarea') as HTMLInputElement;

  beforeAll(async () => {
    server = await startOptionServer();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(async () => {
    puts.length = 0;
    const { port } = server.address() as AddressInfo;
    configureApi({ baseUrl: `http://127.0.0.1:${port}` });
    container = document.createElement('div');
    document.body.append(container);
    root = createRoot(container);
    await act(async () => root?.render(<OptionSection section={section} values={saved} onSaved={() => {}} />));
  });
  afterEach(() => {
    act(() => root?.unmount());
    document.body.innerHTML = '';
  });

  it('when it is opened, then every field shows its stored value', () => {
    expect(input('SystemName').value).toBe('我的网关');
    expect(input('QuotaPerUnit').value).toBe('250000');
    expect(field('DataExportDefaultTime').querySelector('.arco-select-view-value')?.textContent).toBe('天');
    expect(input('ModelRatio').value).toBe('{"gpt-4":15,"gpt-3.5-turbo":0.75}');
    expect(input('SensitiveWords').value).toBe('foo\nbar');
    expect(field('LogConsumeEnabled').querySelector('button[role="switch"]')?.getAttribute('aria-checked')).toBe(
      'true',
    );
  });

  it('when one entry is added to the ratios shown and saved, then only that key is sent, whole', async () => {
    const ratio = input('ModelRatio');
    await act(async () => type(ratio, ratio.value.replace(/}$/, ',"my-model":2}')));
    expect(input('ModelRatio').value).toBe('{"gpt-4":15,"gpt-3.5-turbo":0.75,"my-model":2}');
    const button = [...container.querySelectorAll('button')].find((b) => b.textContent?.startsWith('保存'));
    await act(async () => button?.click());
    await waitFor(() => puts.length > 0, 'a PUT');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(puts).toEqual([{ key: 'ModelRatio', value: '{"gpt-4":15,"gpt-3.5-turbo":0.75,"my-model":2}' }]);
  });
});
