/**
 * A fake Suno API in the task format that relays speak: `POST /suno/submit/{music|lyrics}`
 * answering `{code: "success", message, data: task_id}`, `POST /suno/fetch` (`{ids, action}`) and
 * `GET /suno/fetch/{id}` answering tasks with status, progress and the clips or lyrics. Tasks move
 * with time (SUBMITTED, IN_PROGRESS, SUCCESS); prompts with "fail-me" fail, "reject-me" are refused.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { listenLocal } from './listen.ts';

interface SunoTask {
  id: string;
  action: 'MUSIC' | 'LYRICS';
  prompt: string;
  submitMs: number;
}

export interface FakeSuno {
  url: string;
  submits: { path: string; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

async function json(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const t = Buffer.concat(chunks).toString('utf8');
  return t ? (JSON.parse(t) as Record<string, unknown>) : {};
}

export async function startFakeSuno(opts: { key: string; stepMs?: number; steps?: number }): Promise<FakeSuno> {
  const stepMs = opts.stepMs ?? 250;
  const steps = opts.steps ?? 3;
  const tasks = new Map<string, SunoTask>();
  const state: FakeSuno = { url: '', submits: [], close: async () => undefined };
  const sec = (ms: number) => Math.floor(ms / 1000);

  const view = (t: SunoTask) => {
    const step = Math.floor((Date.now() - t.submitMs) / stepMs);
    const base = {
      task_id: t.id,
      notify_hook: '',
      action: t.action,
      status: 'SUBMITTED',
      fail_reason: '',
      submit_time: sec(t.submitMs),
      start_time: 0,
      finish_time: 0,
      progress: '0%',
      data: null as unknown,
    };
    if (step < 1) return base;
    const started = { ...base, start_time: sec(t.submitMs + stepMs) };
    if (t.prompt.includes('fail-me')) return { ...started, status: 'FAILURE', fail_reason: 'audio generation failed' };
    if (step < steps) return { ...started, status: 'IN_PROGRESS', progress: `${Math.round((100 * step) / steps)}%` };
    const done = { ...started, status: 'SUCCESS', progress: '100%', finish_time: sec(t.submitMs + steps * stepMs) };
    if (t.action === 'LYRICS') {
      return { ...done, data: { id: t.id, title: 'Fake Song', text: `[Verse]\n${t.prompt}`, status: 'complete' } };
    }
    return {
      ...done,
      data: [1, 2].map((n) => ({
        id: `${t.id}-${n}`,
        title: 'Fake Song',
        status: 'complete',
        audio_url: `${state.url}/files/${t.id}-${n}.mp3`,
        image_url: `${state.url}/files/${t.id}-${n}.png`,
        metadata: { tags: 'pop', prompt: t.prompt, duration: 120 },
      })),
    };
  };

  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      if (req.headers.authorization !== `Bearer ${opts.key}`) {
        return send(401, { code: 'unauthorized', message: 'invalid key', data: null });
      }
      const url = new URL(req.url ?? '/', 'http://x');
      const submit = /^\/suno\/submit\/(music|lyrics)$/.exec(url.pathname);
      if (req.method === 'POST' && submit) {
        const body = await json(req);
        state.submits.push({ path: url.pathname, body });
        const prompt = String(body.prompt ?? body.gpt_description_prompt ?? '');
        if (prompt.includes('reject-me')) return send(200, { code: 'fail', message: 'prompt rejected', data: null });
        const id = randomUUID();
        tasks.set(id, { id, action: submit[1] === 'music' ? 'MUSIC' : 'LYRICS', prompt, submitMs: Date.now() });
        return send(200, { code: 'success', message: '', data: id });
      }
      const one = /^\/suno\/fetch\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && one) {
        const t = tasks.get(one[1] as string);
        return t
          ? send(200, { code: 'success', message: '', data: view(t) })
          : send(404, { code: 'not_found', message: '', data: null });
      }
      if (req.method === 'POST' && url.pathname === '/suno/fetch') {
        const body = await json(req);
        const ids = Array.isArray(body.ids) ? body.ids.map(String) : [];
        const data = ids.flatMap((id) => {
          const t = tasks.get(id);
          return t ? [view(t)] : [];
        });
        return send(200, { code: 'success', message: '', data });
      }
      send(404, { code: 'not_found', message: 'not found', data: null });
    })().catch((err) => send(500, { code: 'error', message: String(err), data: null }));
  });
  Object.assign(state, await listenLocal(server));
  return state;
}
