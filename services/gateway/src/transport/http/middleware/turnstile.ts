import type { OptionsCache } from '@aigw/common';
import { invalid } from '@aigw/common/errors';
import type { RequestHandler } from 'express';
import { turnstileOk } from '../../../domain/third-party.ts';

/**
 * The human check on register, login and the mail endpoints: when TurnstileCheckEnabled is on,
 * the `turnstile` query parameter must carry a token that Turnstile's siteverify accepts.
 */
export function turnstileCheck(options: OptionsCache, verifyUrl: string): RequestHandler {
  return async (req, _res, next) => {
    if (!options.bool('TurnstileCheckEnabled')) return next();
    const token = typeof req.query.turnstile === 'string' ? req.query.turnstile : '';
    if (!token) throw invalid('Turnstile token 为空');
    const passed = await turnstileOk(token, {
      verifyUrl,
      secret: options.text('TurnstileSecretKey'),
      ip: req.ip ?? '',
    });
    if (!passed) throw invalid('Turnstile 校验失败，请刷新重试！');
    next();
  };
}
