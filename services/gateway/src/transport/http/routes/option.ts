import { ok } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps } from '../deps.ts';
import { body, optText } from '../schemas.ts';
import { input, validate } from '../validate.ts';

/** A value is text; JSON settings may come as the object itself (saved as its JSON text). */
const Update = validate({
  body: body({
    key: optText,
    value: z.union([optText, z.record(z.string(), z.unknown()), z.array(z.unknown())]),
  }),
});

/**
 * System options (root only) and the group list (admins). Reads never include write-only
 * secrets; a write is validated by the users service, applied to this replica's copy at once and
 * reaches every other service through the option-changed event.
 */
export function optionRoutes(api: Router, deps: RouteDeps): void {
  const { clients, guard, options } = deps;

  api.get('/option/', guard.root, async (_req, res) => {
    const { options: list } = await clients.options.listOptions({ includeSecrets: false });
    ok(
      res,
      list.map((o) => ({ key: o.key, value: o.value })),
    );
  });

  api.put('/option/', guard.root, Update, async (req, res) => {
    const b = input(req, Update).body;
    const key = b.key;
    if (!key) throw invalid('无效的参数');
    const value = b.value === undefined ? '' : typeof b.value === 'object' ? JSON.stringify(b.value) : b.value;
    const user = req.user!;
    const { option, version } = await clients.options.updateOption({
      actor: { userId: user.id, role: user.role, username: user.username },
      key,
      value,
    });
    if (option) options.apply(option.key, option.value, version);
    ok(res, undefined, '保存成功');
  });

  api.get('/group/', guard.admin, (_req, res) => {
    ok(res, Object.keys(options.json<Record<string, number>>('GroupRatio')));
  });
}
