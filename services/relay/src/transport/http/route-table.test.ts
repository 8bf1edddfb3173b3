import { describe, expect, it } from 'vitest';
import { matchRoute, splitUrl } from './route-table.ts';

describe('matchRoute', () => {
  it('when a POST names a pipeline route, then its format, mode and metrics label', () => {
    expect(matchRoute('POST', '/v1/chat/completions')).toEqual({
      kind: 'api',
      format: 'openai',
      mode: 'chat',
      route: '/v1/chat/completions',
    });
    expect(matchRoute('POST', '/v1/images/edits')).toMatchObject({ kind: 'api', mode: 'image_edits' });
    expect(matchRoute('POST', '/v1/messages')).toMatchObject({ kind: 'api', format: 'claude', mode: 'chat' });
    expect(matchRoute('POST', '/v1/responses')).toMatchObject({ kind: 'api', format: 'responses' });
    expect(matchRoute('POST', '/v1/responses/compact')).toMatchObject({
      kind: 'api',
      format: 'openai',
      mode: 'responses_compact',
    });
    expect(matchRoute('POST', '/pg/chat/completions')).toEqual({ kind: 'playground' });
  });

  it('when a POST names a count route, then its format', () => {
    expect(matchRoute('POST', '/v1/messages/count_tokens')).toEqual({
      kind: 'count',
      format: 'claude',
      route: '/v1/messages/count_tokens',
    });
    expect(matchRoute('POST', '/v1/responses/input_tokens')).toMatchObject({ kind: 'count', format: 'responses' });
    expect(matchRoute('POST', '/v1beta/models/gemini%2D2:countTokens')).toEqual({
      kind: 'count',
      format: 'gemini',
      route: '/v1beta/models/{model}:countTokens',
      gemini: { model: 'gemini-2' },
    });
  });

  it('when a Gemini model is in the path, then it is decoded, and a bad escape is a bad path', () => {
    expect(matchRoute('POST', '/v1/models/g-1:streamGenerateContent')).toEqual({
      kind: 'api',
      format: 'gemini',
      mode: 'chat',
      route: '/v1/models/{model}:streamGenerateContent',
      gemini: { model: 'g-1', stream: true },
    });
    expect(matchRoute('POST', '/v1beta/models/%E0:generateContent')).toEqual({ kind: 'bad-path', format: 'gemini' });
    expect(matchRoute('GET', '/v1beta/models/%E0')).toEqual({ kind: 'bad-path', format: 'gemini' });
    expect(matchRoute('GET', '/v1/models/%E0')).toEqual({ kind: 'bad-path', format: 'openai' });
  });

  it('when a GET names a list, a stored response or a billing route, then that route', () => {
    expect(matchRoute('GET', '/v1/models')).toEqual({ kind: 'models' });
    expect(matchRoute('GET', '/v1/models/gpt%204')).toEqual({ kind: 'models', one: 'gpt 4' });
    expect(matchRoute('GET', '/v1beta/models')).toEqual({ kind: 'gemini-models', version: 'v1beta' });
    expect(matchRoute('GET', '/v1beta/models/g-1')).toEqual({ kind: 'gemini-models', version: 'v1beta', one: 'g-1' });
    expect(matchRoute('GET', '/v1/responses/resp_1/input_items')).toEqual({ kind: 'stored', method: 'GET' });
    expect(matchRoute('DELETE', '/v1/responses/resp_1')).toEqual({ kind: 'stored', method: 'DELETE' });
    expect(matchRoute('GET', '/dashboard/billing/usage')).toEqual({ kind: 'billing', what: 'usage' });
    expect(matchRoute('GET', '/v1/dashboard/billing/subscription')).toEqual({ kind: 'billing', what: 'subscription' });
  });

  it('when no route matches under a relay prefix, then a 404 in the prefix format; elsewhere none', () => {
    expect(matchRoute('GET', '/v1/chat/completions')).toEqual({ kind: 'not-found', format: 'openai' });
    expect(matchRoute('PUT', '/v1/messages')).toEqual({ kind: 'not-found', format: 'claude' });
    expect(matchRoute('POST', '/v1beta/models')).toEqual({ kind: 'not-found', format: 'gemini' });
    expect(matchRoute('DELETE', '/pg/x')).toEqual({ kind: 'not-found', format: 'openai' });
    expect(matchRoute('GET', '/dashboard')).toEqual({ kind: 'not-found', format: 'openai' });
    expect(matchRoute('GET', '/healthz')).toBeUndefined();
  });
});

describe('splitUrl', () => {
  it('when a query is present, then it is split off without its ?', () => {
    expect(splitUrl('/v1beta/models?key=k&pageSize=2')).toEqual({ path: '/v1beta/models', query: 'key=k&pageSize=2' });
    expect(splitUrl('/v1/models')).toEqual({ path: '/v1/models', query: '' });
  });
});
