/**
 * A fake midjourney-proxy speaking its HTTP API: `/mj/submit/*` (also under /fast, /relax,
 * /turbo) answering `{code, description, result, properties}`, `/mj/task/{id}/fetch`,
 * `/mj/task/list-by-condition`, `/mj/task/{id}/image-seed`, and the images it links to. Tasks
 * move with time: SUBMITTED, then IN_PROGRESS with growing progress, then SUCCESS with an image
 * URL and buttons. Prompts steer it: "fail-me" fails, "never-finish" never finishes,
 * "reject-me" is refused at submit (code 24).
 */
import { randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { listenLocal } from './listen.ts';

export interface FakeTask {
  id: string;
  action: string;
  prompt: string;
  submitTime: number;
  mode: string;
  body: Record<string, unknown>;
}

export interface FakeMidjourney {
  url: string;
  submits: { path: string; body: Record<string, unknown> }[];
  /** How often each task id was asked for (fetch or list-by-condition). */
  fetches: Map<string, number>;
  /** When each task id was asked for (ms). */
  fetchTimes: Map<string, number[]>;
  tasks: Map<string, FakeTask>;
  /** While true every call answers 503. */
  down: boolean;
  /**
   * Tasks whose prompt holds `held` stay IN_PROGRESS until released here (a test that must act
   * before SUCCESS does not race the clock on a loaded machine).
   */
  release(id: string): void;
  close(): Promise<void>;
}

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

async function json(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const t = Buffer.concat(chunks).toString('utf8');
  return t ? (JSON.parse(t) as Record<string, unknown>) : {};
}

const ACTIONS: Record<string, string> = {
  imagine: 'IMAGINE',
  blend: 'BLEND',
  describe: 'DESCRIBE',
  shorten: 'SHORTEN',
  modal: 'MODAL',
  'upload-discord-images': 'UPLOAD',
  'insight-face/swap': 'SWAP_FACE',
};

/** How the fake's clock moves tasks: the step length, the steps to success, the held tasks, its URL. */
interface Progress {
  stepMs: number;
  steps: number;
  held: Set<string>;
  url: string;
}

/** A task as /mj/task/{id}/fetch shows it now: SUBMITTED, IN_PROGRESS, then SUCCESS (with buttons) or FAILURE. */
function taskView(t: FakeTask, p: Progress) {
  const elapsed = Date.now() - t.submitTime;
  const step = Math.floor(elapsed / p.stepMs);
  const hash = `h${t.id}`;
  const base = {
    id: t.id,
    action: t.action,
    customId: '',
    botType: 'MID_JOURNEY',
    prompt: t.prompt,
    promptEn: t.prompt ? `${t.prompt} (en)` : '',
    description: '提交成功',
    state: String(t.body.state ?? ''),
    submitTime: t.submitTime,
    startTime: step >= 1 ? t.submitTime + p.stepMs : 0,
    finishTime: 0,
    imageUrl: '',
    status: 'SUBMITTED',
    progress: '0%',
    failReason: '',
    buttons: [] as unknown[],
    properties: { finalPrompt: t.prompt, mode: t.mode },
  };
  if (step < 1) return base;
  if (t.prompt.includes('fail-me')) {
    return {
      ...base,
      status: 'FAILURE',
      progress: '0%',
      failReason: 'Banned prompt detected',
      finishTime: Date.now(),
    };
  }
  if (step < p.steps || t.prompt.includes('never-finish') || p.held.has(t.id)) {
    const pct = Math.min(99, Math.round((100 * step) / p.steps));
    return { ...base, status: 'IN_PROGRESS', progress: `${pct}%`, imageUrl: '' };
  }
  return {
    ...base,
    status: 'SUCCESS',
    progress: '100%',
    finishTime: t.submitTime + p.steps * p.stepMs,
    imageUrl: `${p.url}/attachments/${t.id}.png`,
    buttons: [
      { customId: `MJ::JOB::upsample::1::${hash}`, emoji: '', label: 'U1', type: 2, style: 2 },
      { customId: `MJ::JOB::variation::1::${hash}`, emoji: '', label: 'V1', type: 2, style: 2 },
      { customId: `MJ::JOB::reroll::0::${hash}::SOLO`, emoji: '🔄', label: '', type: 2, style: 2 },
    ],
  };
}

export async function startFakeMidjourney(opts: {
  secret: string;
  stepMs?: number;
  steps?: number;
}): Promise<FakeMidjourney> {
  const stepMs = opts.stepMs ?? 200;
  const steps = opts.steps ?? 3;
  const held = new Set<string>();
  const state: FakeMidjourney = {
    url: '',
    submits: [],
    fetches: new Map(),
    fetchTimes: new Map(),
    tasks: new Map(),
    down: false,
    release: (id) => {
      held.delete(id);
    },
    close: async () => undefined,
  };

  const view = (t: FakeTask) => taskView(t, { stepMs, steps, held, url: state.url });

  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const img = /^\/attachments\/([^/]+)\.png$/.exec(url.pathname);
      if (img) {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(PNG);
        return;
      }
      if (state.down) return send(503, { code: 503, description: 'service unavailable' });
      if (req.headers['mj-api-secret'] !== opts.secret) return send(401, { code: 401, description: 'Unauthorized' });
      const m = /^(?:\/(fast|relax|turbo))?\/mj(\/.*)$/.exec(url.pathname);
      if (!m) return send(404, { code: 404, description: 'not found' });
      const mode = m[1] ?? 'fast';
      const rest = m[2] as string;
      const submit = /^\/submit\/([a-z-]+)$/.exec(rest) ?? /^\/(insight-face\/swap)$/.exec(rest);
      if (req.method === 'POST' && submit) {
        const kind = submit[1] as string;
        const body = await json(req);
        state.submits.push({ path: url.pathname, body });
        const prompt = String(body.prompt ?? '');
        if (prompt.includes('reject-me')) return send(200, { code: 24, description: '可能包含敏感词', result: null });
        let action = ACTIONS[kind];
        if (kind === 'action' || kind === 'change' || kind === 'simple-change') {
          const [taskId, letter] =
            kind === 'simple-change' ? String(body.content ?? '').split(/\s+/) : [String(body.taskId ?? '')];
          if (letter)
            body.action = letter.startsWith('U') ? 'upscale' : letter.startsWith('R') ? 'reroll' : 'variation';
          const parent = state.tasks.get(taskId ?? '');
          if (!parent) return send(200, { code: 4, description: '关联任务不存在或已失效', result: null });
          const cid = String(body.customId ?? body.action ?? '').toLowerCase();
          action =
            cid.includes('upsample') || cid === 'upscale' ? 'UPSCALE' : cid.includes('reroll') ? 'REROLL' : 'VARIATION';
        }
        if (!action) return send(200, { code: 4, description: 'unsupported', result: null });
        const id = `${Date.now()}${randomInt(100000, 999999)}`;
        state.tasks.set(id, { id, action, prompt, submitTime: Date.now(), mode, body });
        if (prompt.includes('held')) held.add(id);
        return send(200, { code: 1, description: '提交成功', result: id, properties: { discordInstanceId: 'fake' } });
      }
      const task = /^\/task\/([^/]+)\/(fetch|image-seed)$/.exec(rest);
      if (req.method === 'GET' && task) {
        const t = state.tasks.get(task[1] as string);
        if (!t) return send(404, null);
        if (task[2] === 'image-seed') return send(200, { code: 1, description: '成功', result: `seed-${t.id}` });
        state.fetches.set(t.id, (state.fetches.get(t.id) ?? 0) + 1);
        return send(200, view(t));
      }
      if (req.method === 'POST' && rest === '/task/list-by-condition') {
        const body = await json(req);
        const ids = Array.isArray(body.ids) ? body.ids.map(String) : [];
        const out = [];
        for (const id of ids) {
          const t = state.tasks.get(id);
          if (!t) continue;
          state.fetches.set(id, (state.fetches.get(id) ?? 0) + 1);
          state.fetchTimes.set(id, [...(state.fetchTimes.get(id) ?? []), Date.now()]);
          out.push(view(t));
        }
        return send(200, out);
      }
      send(404, { code: 404, description: 'not found' });
    })().catch((err) => send(500, { code: 500, description: String(err) }));
  });
  Object.assign(state, await listenLocal(server));
  return state;
}
