import { CHANNEL_CATALOGUE } from '@aigw/common/channel-catalogue';
import { describe, expect, it } from 'vitest';
import { DOUBAO_VIDEO_CHANNEL_TYPE } from '../../../../tasks/src/domain/doubao-video.ts';
import { JIMENG_CHANNEL_TYPE } from '../../../../tasks/src/domain/jimeng.ts';
import { KLING_CHANNEL_TYPE } from '../../../../tasks/src/domain/kling.ts';
import { MJ_CHANNEL_TYPES } from '../../../../tasks/src/domain/mj-submit.ts';
import { SUNO_CHANNEL_TYPE } from '../../../../tasks/src/domain/suno.ts';
import { VIDEO_CHANNEL_TYPES } from '../../../../tasks/src/domain/video.ts';
import { VIDU_CHANNEL_TYPE } from '../../../../tasks/src/domain/vidu.ts';
import { ADAPTORS } from './index.ts';

const sorted = (xs: Iterable<number>) => [...xs].sort((a, b) => a - b);
const servedBy = (who: 'relay' | 'tasks') =>
  sorted(CHANNEL_CATALOGUE.filter((e) => e.servedBy === who).map((e) => e.type));

/** Adding a provider = adaptor + fake + one catalogue line (docs/development.md): the two agree. */
describe('channel-type catalogue and adaptors', () => {
  it('when the catalogue lists a relay type, then the relay has its adaptor, and every adaptor has its entry', () => {
    expect(servedBy('relay')).toEqual(sorted(Object.keys(ADAPTORS).map(Number)));
  });

  it('when the catalogue lists a tasks type, then a tasks platform serves it, and every platform type has its entry', () => {
    const platforms = new Set([
      ...MJ_CHANNEL_TYPES,
      SUNO_CHANNEL_TYPE,
      KLING_CHANNEL_TYPE,
      JIMENG_CHANNEL_TYPE,
      VIDU_CHANNEL_TYPE,
      DOUBAO_VIDEO_CHANNEL_TYPE,
      ...VIDEO_CHANNEL_TYPES,
    ]);
    const relayed = new Set(servedBy('relay'));
    // OpenAI channels (1) are relayed and also serve /v1/videos: a tasks platform of a relay type.
    expect(sorted([...platforms].filter((t) => !relayed.has(t)))).toEqual(servedBy('tasks'));
  });

  it("when a channel leaves base_url empty, then the relay's default host is the catalogue's (three known exceptions)", () => {
    const differ = CHANNEL_CATALOGUE.filter((e) => {
      const a = ADAPTORS[e.type];
      return a && a.defaultBaseUrl !== e.baseUrl;
    }).map((e) => [e.type, e.baseUrl, ADAPTORS[e.type]?.defaultBaseUrl]);
    // 18 Spark: the relay's WebSocket host (the channels service has no HTTP call for it);
    // 20 OpenRouter: the relay adds /api/v1 to the host, the channels service /v1 to .../api;
    // 37 Dify: the relay falls back to the cloud host, the catalogue asks for the channel's own.
    expect(differ).toEqual([
      [18, '', 'wss://spark-api.xf-yun.com'],
      [37, '', 'https://api.dify.ai'],
      [20, 'https://openrouter.ai/api', 'https://openrouter.ai'],
    ]);
  });

  it('when the catalogue is read, then each type is listed once with its name in both languages', () => {
    const types = CHANNEL_CATALOGUE.map((e) => e.type);
    expect(new Set(types).size).toBe(types.length);
    for (const e of CHANNEL_CATALOGUE) {
      expect(e.name && (e.nameEn ?? e.name), `type ${e.type}`).toBeTruthy();
      for (const p of e.keyParts?.parts ?? [])
        expect(p.label.zh && p.label.en && p.name, `type ${e.type}`).toBeTruthy();
    }
  });
});
