import { eventually } from '@aigw/testkit';
import { Api, createChannel } from '@aigw/testkit/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  autoGroups,
  drawingReady,
  follow,
  hookServer,
  type Json,
  logsOf,
  mj,
  setOption,
  settledLogs,
  startTasksReplica,
  startTasksStack,
  type TasksStack,
  userWithToken,
  walletOf,
} from './tasks-harness.ts';

// mj_imagine 0.1 $ and mj_upscale 0.05 $ (reference per-call prices) x 500,000 x group ratio 1.
const IMAGINE = 50_000;
const UPSCALE = 25_000;

let s: TasksStack;
let hook: Awaited<ReturnType<typeof hookServer>>;

beforeAll(async () => {
  s = await startTasksStack('mj_imagine,mj_upscale,mj_variation,mj_reroll');
  hook = await hookServer();
  await setOption(s, 'DrawingEnabled', 'true');
  await setOption(s, 'MjNotifyEnabled', 'true');
  const probe = await userWithToken(s);
  await drawingReady(s, probe.key);
});

afterAll(async () => {
  await hook?.close();
  await s?.stop();
});

describe('midjourney through the gateway', () => {
  it('when an imagine is submitted, then it progresses to SUCCESS with an image, charged once and settled', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const before = await walletOf(s, u.userId);
    const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'a red cat --relax', notifyHook: hook.url });
    expect(sub.status).toBe(200);
    expect(sub.body.code).toBe(1);
    const id = String(sub.body.result);
    expect((await walletOf(s, u.userId)).quota).toBe(before.quota - IMAGINE);
    // The client's notifyHook is not sent upstream (this service calls it); the prompt is (mode clear is off).
    const up = s.fake.submits.find((x) => String(x.body.prompt).startsWith('a red cat'));
    expect(up?.body.notifyHook).toBeUndefined();
    expect(up?.body.prompt).toBe('a red cat --relax');

    const { task, seen } = await follow(s, u.key, id, (t) => t.status === 'SUCCESS' || t.status === 'FAILURE');
    expect(task.status).toBe('SUCCESS');
    expect(seen).toContain('IN_PROGRESS');
    expect(task.progress).toBe('100%');
    expect(task.action).toBe('IMAGINE');
    expect(task.promptEn).toBe('a red cat --relax (en)');
    // MjForwardUrlEnabled (default on): the image goes through this service.
    expect(task.imageUrl).toBe(`http://localhost:3000/mj/image/${id}`);
    const img = await fetch(`${s.gateway}/mj/image/${id}`);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect((await img.arrayBuffer()).byteLength).toBeGreaterThan(50);

    const settled = await eventually(
      () => walletOf(s, u.userId),
      (w) => w.used === before.used + IMAGINE,
    );
    expect(settled).toEqual({ quota: before.quota - IMAGINE, used: before.used + IMAGINE });
    const logs = await eventually(
      () => logsOf(s, u.userId),
      (l) => l.some((x) => x.type === 2),
    );
    const mine = logs.filter((l) => l.type === 2 || l.type === 6);
    expect(mine.map((l) => [l.type, l.quota, l.modelName])).toEqual([[2, IMAGINE, 'mj_imagine']]);
    const hooked = await eventually(
      async () => hook.calls.filter((c) => c.id === id),
      (c) => c.some((x) => x.status === 'SUCCESS'),
    );
    expect(hooked.at(-1)?.status).toBe('SUCCESS');
    expect(hooked.at(-1)?.imageUrl).toBe(`http://localhost:3000/mj/image/${id}`);
  });

  it('when an action is sent before its task succeeded, then it is refused unbilled; after SUCCESS it runs on that channel', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    // Held IN_PROGRESS by the fake until released: the early action cannot race the task's end.
    const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'a blue dog held' });
    const id = String(sub.body.result);
    const w0 = await walletOf(s, u.userId);
    const early = await mj(s, u.key, '/mj/submit/action', { taskId: id, customId: `MJ::JOB::upsample::1::h${id}` });
    expect(early.status).toBe(400);
    expect(early.body).toMatchObject({ code: 4, description: '任务状态不是成功，无法执行该操作' });
    expect(await walletOf(s, u.userId)).toEqual(w0);
    s.fake.release(id);

    const { task } = await follow(s, u.key, id, (t) => t.status === 'SUCCESS');
    const button = (task.buttons as { customId: string; label: string }[]).find((b) => b.label === 'U1');
    expect(button).toBeDefined();
    const act = await mj(s, u.key, '/mj/submit/action', { taskId: id, customId: button?.customId });
    expect(act.body.code).toBe(1);
    expect((await walletOf(s, u.userId)).quota).toBe(w0.quota - UPSCALE);
    const up = await follow(s, u.key, String(act.body.result), (t) => t.status === 'SUCCESS');
    expect(up.task.action).toBe('UPSCALE');
    // Another user cannot see or act on the task.
    const other = await userWithToken(s, { quota: 1_000_000 });
    expect((await mj(s, other.key, `/mj/task/${id}/fetch`)).status).toBe(404);
  });

  it('when the upstream fails a task, then the charge is refunded and the logs show the charge and the refund once each', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const before = await walletOf(s, u.userId);
    const refused = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'reject-me please' });
    expect(refused.body.code).toBe(24);
    expect(await walletOf(s, u.userId)).toEqual(before);

    const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'fail-me now' });
    expect(sub.body.code).toBe(1);
    expect((await walletOf(s, u.userId)).quota).toBe(before.quota - IMAGINE);
    const { task } = await follow(s, u.key, String(sub.body.result), (t) => t.status === 'FAILURE');
    expect(task.failReason).toBe('Banned prompt detected');
    const after = await eventually(
      () => walletOf(s, u.userId),
      (w) => w.quota === before.quota,
    );
    expect(after).toEqual(before);
    const logs = await eventually(
      () => logsOf(s, u.userId),
      (l) => l.some((x) => x.type === 6),
    );
    // Counted once billing is done and the logs are past a marker: a duplicate would be there.
    const rows = (await settledLogs(s, u.userId)).map((l) => [l.type, l.quota]).sort();
    expect(logs.length).toBeGreaterThan(0);
    expect(rows).toEqual([
      [2, IMAGINE],
      [6, IMAGINE],
    ]);
  });

  it('when a task never finishes, then it fails after the (shortened) timeout and is refunded', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const before = await walletOf(s, u.userId);
    const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'never-finish this' });
    expect(sub.body.code).toBe(1);
    const { task, seen } = await follow(s, u.key, String(sub.body.result), (t) => t.status === 'FAILURE');
    expect(seen).toContain('IN_PROGRESS');
    expect(task.status).toBe('FAILURE');
    expect(task.failReason).toBe('任务超时');
    expect(task.finishTime - task.submitTime).toBeGreaterThanOrEqual(4_000);
    expect(
      await eventually(
        () => walletOf(s, u.userId),
        (w) => w.quota === before.quota,
      ),
    ).toEqual(before);
    await eventually(
      () => logsOf(s, u.userId),
      (l) => l.some((x) => x.type === 6),
    );
    const rows = (await settledLogs(s, u.userId)).map((l) => [l.type, l.quota]).sort();
    expect(rows).toEqual([
      [2, IMAGINE],
      [6, IMAGINE],
    ]);
  });

  it('when two tasks-service replicas poll the same tasks, then each change is written once and each refund happens once', async () => {
    // The stack's replica polls on its timer; two more poll whenever the test says, both at once.
    const r2 = await startTasksReplica(s, { poller: false });
    const r3 = await startTasksReplica(s, { poller: false });
    let polling = true;
    const drive = (async () => {
      while (polling) {
        await Promise.all([r2.pollOnce(), r3.pollOnce()]);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      const u = await userWithToken(s, { quota: 10_000_000 });
      const before = await walletOf(s, u.userId);
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await mj(s, u.key, '/mj/submit/imagine', { prompt: i % 2 ? `fail-me ${i}` : `pair ${i}` });
        expect(r.body.code).toBe(1);
        ids.push(String(r.body.result));
      }
      for (const id of ids) await follow(s, u.key, id, (t) => t.status === 'SUCCESS' || t.status === 'FAILURE');
      const w = await eventually(
        () => walletOf(s, u.userId),
        (x) => x.used === before.used + 4 * IMAGINE && x.quota === before.quota - 4 * IMAGINE,
      );
      expect(w).toEqual({ quota: before.quota - 4 * IMAGINE, used: before.used + 4 * IMAGINE });
      await eventually(
        () => logsOf(s, u.userId),
        (l) => l.filter((x) => x.type === 6).length >= 4,
      );
      // Counted once billing is done and the logs are past a marker: a duplicate would be there.
      const logs = await settledLogs(s, u.userId);
      expect(logs.filter((l) => l.type === 2)).toHaveLength(8);
      expect(logs.filter((l) => l.type === 6)).toHaveLength(4);

      const docs = await s.db
        .collection('mj_tasks')
        .find({ mj_id: { $in: ids } })
        .toArray();
      expect(docs).toHaveLength(8);
      const owners = new Set<string>();
      for (const d of docs) {
        // Only changes are written, each once: a failing task changes at most twice (the first
        // answer's details, FAILURE), a succeeding one at most five times (details, 25, 50, 75 %,
        // SUCCESS); a result applied twice would exceed it.
        expect(d.polls).toBeGreaterThanOrEqual(1);
        expect(d.polls).toBeLessThanOrEqual(d.status === 'SUCCESS' ? 5 : 2);
        expect(d.polls).toBeLessThanOrEqual(s.fake.fetches.get(d.mj_id as string) as number);
        expect(d.billing).toBe(d.status === 'SUCCESS' ? 'settled' : 'refunded');
        for (const o of (d.pollers as string[]) ?? []) owners.add(o);
      }
      expect(owners.size).toBeGreaterThanOrEqual(2);
      for (const id of ids) {
        // A task is asked for about once per poll interval (300 ms), never twice at once.
        const times = s.fake.fetchTimes.get(id) ?? [];
        const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
        expect(Math.min(...gaps, 1_000)).toBeGreaterThanOrEqual(100);
      }
    } finally {
      polling = false;
      await drive;
      await r2.stop();
      await r3.stop();
    }
  });
});

describe('the console task lists (/api/mj)', () => {
  it('when an admin and a user list drawing tasks, then the admin sees all with channels and filters, the user only their own', async () => {
    const a = await userWithToken(s, { quota: 1_000_000 });
    const b = await userWithToken(s, { quota: 1_000_000 });
    const subA = await mj(s, a.key, '/mj/submit/imagine', { prompt: 'list me a' });
    const subB = await mj(s, b.key, '/mj/submit/imagine', { prompt: 'list me b' });
    const idA = String(subA.body.result);
    await follow(s, a.key, idA, (t) => t.status === 'SUCCESS');

    const root = new Api(s.gateway);
    await root.login('root', '123456');
    const all = await root.get<Json>('/mj/', { p: '1', mj_id: idA });
    expect(all.body.success).toBe(true);
    expect(all.body.data?.total).toBe(1);
    const row = all.body.data?.items[0];
    expect(row).toMatchObject({
      mj_id: idA,
      user_id: a.userId,
      channel_id: s.channelId,
      action: 'IMAGINE',
      code: 1,
      status: 'SUCCESS',
      progress: '100%',
      prompt: 'list me a',
      prompt_en: 'list me a (en)',
      fail_reason: '',
      image_url: `http://localhost:3000/mj/image/${idA}`,
    });
    expect(row.finish_time).toBeGreaterThan(row.submit_time);
    const byChannel = await root.get<Json>('/mj/', { channel_id: String(s.channelId), p: '1' });
    expect(byChannel.body.data?.items.map((i: Json) => i.mj_id)).toEqual(
      expect.arrayContaining([idA, subB.body.result]),
    );
    const future = await root.get<Json>('/mj/', { start_timestamp: String(Date.now() + 60_000) });
    expect(future.body.data?.total).toBe(0);

    const user = new Api(s.gateway);
    await user.login(a.username, 'password123');
    const own = await user.get<Json>('/mj/self/', { p: '1' });
    expect(own.body.success).toBe(true);
    expect(own.body.data?.items.map((i: Json) => i.mj_id)).toEqual([idA]);
    expect(own.body.data?.items[0].channel_id).toBeUndefined();
    expect(own.body.data).toMatchObject({ total: 1, page: 1 });
    expect((await user.get('/mj/')).status).toBe(403);
  });
});

describe('drawing options', () => {
  it('when MjModeClearEnabled and MjAccountFilterEnabled change, then the prompt flags and accountFilter reach the upstream accordingly', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const body = { prompt: 'opt cat --fast --turbo', accountFilter: { channelId: 'c1' } };
    await mj(s, u.key, '/mj/submit/imagine', body);
    let up = s.fake.submits.at(-1);
    expect(up?.body.prompt).toBe('opt cat --fast --turbo');
    expect(up?.body.accountFilter).toBeUndefined();

    await setOption(s, 'MjModeClearEnabled', 'true');
    await setOption(s, 'MjAccountFilterEnabled', 'true');
    await eventually(
      async () => {
        // Through the gateway's port: the mode prefixes are proxied like /mj.
        await fetch(`${s.gateway}/relax/mj/submit/imagine`, {
          method: 'POST',
          headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return s.fake.submits.at(-1);
      },
      (x) => x?.body.prompt === 'opt cat' && x.body.accountFilter !== undefined,
    );
    up = s.fake.submits.at(-1);
    expect(up?.path).toBe('/relax/mj/submit/imagine');
    expect(up?.body).toMatchObject({ prompt: 'opt cat', accountFilter: { channelId: 'c1' } });
    await setOption(s, 'MjModeClearEnabled', 'false');
    await setOption(s, 'MjAccountFilterEnabled', 'false');
  });

  it('when MjForwardUrlEnabled is off, then clients get the upstream image URL and /mj/image is closed', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'plain url' });
    const id = String(sub.body.result);
    await follow(s, u.key, id, (t) => t.status === 'SUCCESS');
    await setOption(s, 'MjForwardUrlEnabled', 'false');
    const r = await eventually(
      () => mj(s, u.key, `/mj/task/${id}/fetch`),
      (x) => String(x.body.imageUrl).startsWith(s.fake.url),
    );
    expect(r.body.imageUrl).toBe(`${s.fake.url}/attachments/${id}.png`);
    expect((await fetch(`${s.gateway}/mj/image/${id}`)).status).toBe(404);
    // list-by-condition and image-seed answer in midjourney-proxy's shapes.
    const list = await mj(s, u.key, '/mj/task/list-by-condition', { ids: [id, 'nope'] });
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ id, status: 'SUCCESS', imageUrl: r.body.imageUrl });
    const seed = await mj(s, u.key, `/mj/task/${id}/image-seed`);
    expect(seed.body).toEqual({ code: 1, description: '成功', result: `seed-${id}` });
    await setOption(s, 'MjForwardUrlEnabled', 'true');
  });

  it('when a simple-change or change is submitted, then it acts on the task and is priced by its action', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'change me' });
    const id = String(sub.body.result);
    await follow(s, u.key, id, (t) => t.status === 'SUCCESS');
    const w0 = await walletOf(s, u.userId);
    const v = await mj(s, u.key, '/mj/submit/simple-change', { content: `${id} V2` });
    expect(v.body.code).toBe(1);
    expect(s.fake.submits.at(-1)?.path).toBe('/mj/submit/simple-change');
    const c = await mj(s, u.key, '/mj/submit/change', { taskId: id, action: 'UPSCALE', index: 1 });
    expect(c.body.code).toBe(1);
    expect((await walletOf(s, u.userId)).quota).toBe(w0.quota - IMAGINE - UPSCALE);
    const bad = await mj(s, u.key, '/mj/submit/simple-change', { content: `${id} X9` });
    expect(bad.status).toBe(400);
  });

  it('when MjActionCheckSuccessEnabled is off, then an action on an unfinished task goes through', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    await setOption(s, 'MjActionCheckSuccessEnabled', 'false');
    try {
      const r = await eventually(
        async () => {
          const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'check off never-finish' });
          const id = String(sub.body.result);
          return mj(s, u.key, '/mj/submit/action', { taskId: id, customId: `MJ::JOB::upsample::1::h${id}` });
        },
        (x) => x.body.code === 1,
      );
      expect(r.body.code).toBe(1);
    } finally {
      await setOption(s, 'MjActionCheckSuccessEnabled', 'true');
    }
  });

  it('when MjNotifyEnabled is off, then the notifyHook is not called', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    await setOption(s, 'MjNotifyEnabled', 'false');
    try {
      // Until the tasks service sees the change a task may still call its hook; then none does.
      const quiet = await eventually(
        async () => {
          const sub = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'quiet', notifyHook: hook.url });
          const id = String(sub.body.result);
          await follow(s, u.key, id, (t) => t.status === 'SUCCESS');
          await new Promise((r) => setTimeout(r, 700));
          return hook.calls.filter((c) => c.id === id).length;
        },
        (n) => n === 0,
        20_000,
      );
      expect(quiet).toBe(0);
    } finally {
      await setOption(s, 'MjNotifyEnabled', 'true');
    }
  });

  it('when a blend, a describe or a face swap is submitted, then each goes to its endpoint at its price', async () => {
    await setOption(
      s,
      'ModelPrice',
      JSON.stringify({ mj_imagine: 0.1, mj_upscale: 0.05, mj_blend: 0.1, mj_describe: 0.05, swap_face: 0.02 }),
    );
    // A midjourney-proxy-plus channel (type 5) on the same fake serves these models.
    await createChannel(s, { type: 5, baseUrl: s.fake.url, key: s.secret, models: 'mj_blend,mj_describe,swap_face' });
    const u = await userWithToken(s, { quota: 1_000_000 });
    const img = 'data:image/png;base64,iVBORw0KGgo=';
    const blend = await eventually(
      () => mj(s, u.key, '/mj/submit/blend', { base64Array: [img, img], dimensions: 'SQUARE' }),
      (x) => x.body.code === 1,
    );
    expect(blend.body.code).toBe(1);
    const w1 = await walletOf(s, u.userId);
    const describe = await mj(s, u.key, '/mj/submit/describe', { base64: img });
    expect(describe.body.code).toBe(1);
    const swap = await mj(s, u.key, '/mj/insight-face/swap', { sourceBase64: img, targetBase64: img });
    expect(swap.body.code).toBe(1);
    expect(s.fake.submits.at(-1)?.path).toBe('/mj/insight-face/swap');
    expect((await walletOf(s, u.userId)).quota).toBe(w1.quota - 25_000 - 10_000);
    expect((await mj(s, u.key, '/mj/submit/blend', { base64Array: [img] })).status).toBe(400);
    expect((await mj(s, u.key, '/mj/submit/swap-face', {})).status).toBe(404);
  });

  it("when an auto token submits, then the first auto group with a channel serves it at that group's ratio for the user, and an action on the task stays in that group", async () => {
    const [ga, gb] = ['mjauto-a', 'mjauto-b'];
    await autoGroups(s, ga, gb);
    // ga has no channel for the model; gb has one.
    await createChannel(s, { type: 2, baseUrl: s.fake.url, key: s.secret, models: 'mj_imagine,mj_upscale', group: gb });
    const u = await userWithToken(s, { quota: 1_000_000, token: { group: 'auto' } });
    const sub = await eventually(
      () => mj(s, u.key, '/mj/submit/imagine', { prompt: 'an auto cat' }),
      (r) => r.body?.code === 1,
      { what: 'the auto token served' },
    );
    const id = String(sub.body.result);
    // GroupGroupRatio default -> gb (3), not gb's GroupRatio (4) nor the default group's (1).
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - IMAGINE * 3);
    expect(await s.db.collection('mj_tasks').findOne({ mj_id: id })).toMatchObject({ group: gb, group_ratio: 3 });
    const { task } = await follow(s, u.key, id, (t) => t.status === 'SUCCESS');
    const button = (task.buttons as { customId: string; label: string }[]).find((b) => b.label === 'U1');
    const act = await mj(s, u.key, '/mj/submit/action', { taskId: id, customId: button?.customId });
    expect(act.body.code).toBe(1);
    expect((await walletOf(s, u.userId)).quota).toBe(1_000_000 - IMAGINE * 3 - UPSCALE * 3);
    const rows = (await settledLogs(s, u.userId)).filter((l) => l.type === 2);
    expect(rows.map((l) => [l.modelName, l.group, l.quota]).sort()).toEqual([
      ['mj_imagine', gb, IMAGINE * 3],
      ['mj_upscale', gb, UPSCALE * 3],
    ]);
    // A token in a group the user may not use is refused before anything is reserved.
    const other = await userWithToken(s, { quota: 1_000_000, group: 'vip', token: { group: gb } });
    const denied = await mj(s, other.key, '/mj/submit/imagine', { prompt: 'not mine' });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 4, description: `无权访问 ${gb} 分组` });
    expect((await walletOf(s, other.userId)).quota).toBe(1_000_000);
  });

  it('when a subscription covers the model, then it pays the task (the wallet stays, its window counts it, the log says so) and gets a failed task back', async () => {
    const root = new Api(s.gateway);
    await root.login('root', '123456');
    const plan = await root.post<{ id: number }>('/subscription/admin/plans', {
      plan: {
        title: 'Drawing',
        price_amount: 1,
        duration_unit: 'month',
        daily_quota: 1_000_000,
        models: ['mj_imagine'],
      },
    });
    const u = await userWithToken(s, { quota: 2_000_000 });
    const user = new Api(s.gateway);
    await user.login(u.username, 'password123');
    const bought = await user.post('/subscription/balance/pay', {
      plan_id: plan.body.data?.id,
      request_id: `buy-${u.userId}`,
    });
    expect(bought.body.success).toBe(true);
    const used = async () => {
      const mine = (await user.get<Json>('/subscription/self')).body.data as Json;
      return Number(mine.subscriptions[0].subscription.windows[0].used);
    };
    const before = await walletOf(s, u.userId);

    const ok = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'a paid cat' });
    const failing = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'fail-me paid' });
    expect([ok.body.code, failing.body.code]).toEqual([1, 1]);
    expect(await walletOf(s, u.userId)).toEqual(before);
    expect(await used()).toBe(2 * IMAGINE);
    await follow(s, u.key, String(ok.body.result), (t) => t.status === 'SUCCESS');
    await follow(s, u.key, String(failing.body.result), (t) => t.status === 'FAILURE');
    const logs = await settledLogs(s, u.userId);
    // The success settled in the window, the failure given back to it; the wallet never moved.
    expect(await used()).toBe(IMAGINE);
    expect((await walletOf(s, u.userId)).quota).toBe(before.quota);
    const rows = logs
      .filter((l) => l.type === 2 || l.type === 6)
      .map((l) => [l.type, JSON.parse(l.other).billing_source]);
    expect(rows.sort()).toEqual([
      [2, 'subscription'],
      [2, 'subscription'],
      [6, 'subscription'],
    ]);
  });

  it('when DrawingEnabled is off, then submits are refused and nothing is charged', async () => {
    const u = await userWithToken(s, { quota: 1_000_000 });
    await setOption(s, 'DrawingEnabled', 'false');
    try {
      // An invalid body is refused before anything is charged, whichever way the option stands.
      await eventually(
        () => mj(s, u.key, '/mj/submit/imagine', {}),
        (x) => x.body.description === '绘图功能未启用',
      );
      const r = await mj(s, u.key, '/mj/submit/imagine', { prompt: 'off' });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ code: 4, description: '绘图功能未启用' });
      expect(await walletOf(s, u.userId)).toEqual({ quota: 1_000_000, used: 0 });
    } finally {
      await setOption(s, 'DrawingEnabled', 'true');
      await drawingReady(s, u.key);
    }
  });
});
