/**
 * Replicate (type 56): image generation through the predictions API,
 * `POST {base}/v1/models/{owner}/{name}/predictions` with the bearer token and `Prefer: wait`
 * (Replicate holds the answer until the prediction ends, up to a minute). OpenAI's image request
 * becomes the prediction's `input` as FLUX models read it: `prompt`, `aspect_ratio` from `size`
 * (or `custom` with width and height in FLUX's bounds), `num_outputs` from `n`, `output_format`,
 * `prompt_upsampling` for hd/high quality, and the client's own `input` object merged in. The
 * prediction's output URLs come back as OpenAI's `data: [{url}]`; a prediction that failed or did
 * not finish in the wait is an upstream error. `b64_json` answers are refused (Replicate serves
 * files by URL).
 */
import { UpstreamFailure } from '../exchange/failure.ts';
import type { Json } from '../protocols/openai.ts';
import { type Adaptor, baseOf, type RelayMode } from './types.ts';

const RATIOS = new Set(['1:1', '16:9', '9:16', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3']);
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
/** FLUX's custom sizes: 256 to 1440 pixels, in steps of 32. */
const fluxDimension = (v: number) => Math.min(1440, Math.max(256, Math.round(v / 32) * 32));

/** OpenAI's `WxH` as FLUX's aspect ratio, or a custom size; undefined when not a size. */
export function fluxSize(size: string): Json | undefined {
  const m = /^\s*(\d+)\s*x\s*(\d+)\s*$/.exec(size);
  if (!m) return undefined;
  const w = Number(m[1]);
  const h = Number(m[2]);
  if (!w || !h) return undefined;
  const g = gcd(w, h);
  const ratio = `${w / g}:${h / g}`;
  if (RATIOS.has(ratio)) return { aspect_ratio: ratio };
  // OpenAI's DALL-E 3 sizes are near 16:9 / 9:16.
  if (w === 1792 && h === 1024) return { aspect_ratio: '16:9' };
  if (w === 1024 && h === 1792) return { aspect_ratio: '9:16' };
  return { aspect_ratio: 'custom', width: fluxDimension(w), height: fluxDimension(h) };
}

const refuse = (message: string) => new UpstreamFailure(400, message, 'refused');

export const replicate: Adaptor = {
  name: 'Replicate',
  protocol: 'openai',
  modes: new Set<RelayMode>(['images']),
  defaultBaseUrl: 'https://api.replicate.com',
  target: (ch, _mode, model) => ({
    url: `${baseOf(ch, replicate)}/v1/models/${model.split('/').map(encodeURIComponent).join('/')}/predictions`,
    headers: { authorization: `Bearer ${ch.key}`, prefer: 'wait', accept: 'application/json' },
  }),
  convert: {
    images: {
      request: (body) => {
        const prompt = typeof body.prompt === 'string' ? body.prompt.trim() : '';
        if (!prompt) throw refuse('prompt is required');
        if (body.response_format === 'b64_json')
          throw refuse('response_format b64_json is not supported by Replicate channels');
        const input: Json = { prompt };
        if (typeof body.size === 'string') Object.assign(input, fluxSize(body.size));
        if (typeof body.output_format === 'string' && body.output_format) input.output_format = body.output_format;
        if (typeof body.n === 'number' && body.n > 0) input.num_outputs = body.n;
        if (body.quality === 'hd' || body.quality === 'high') input.prompt_upsampling = true;
        if (body.input && typeof body.input === 'object' && !Array.isArray(body.input))
          Object.assign(input, body.input);
        return { input };
      },
      response: (res, _body, _model, estimate) => {
        const err = res.error as Json | string | null | undefined;
        if (err) {
          const message =
            typeof err === 'string' ? err : String(err.message || err.detail || err.code || 'prediction error');
          throw new UpstreamFailure(502, `replicate: ${message}`);
        }
        if (typeof res.status === 'string' && res.status !== 'succeeded')
          throw new UpstreamFailure(502, `replicate: prediction ${String(res.id ?? '')} is ${res.status}`);
        const urls = (Array.isArray(res.output) ? res.output : [res.output]).filter(
          (u): u is string => typeof u === 'string' && u.trim() !== '',
        );
        if (urls.length === 0) throw new UpstreamFailure(502, 'replicate: the prediction has no output');
        return {
          body: { created: Math.floor(Date.now() / 1000), data: urls.map((url) => ({ url })) },
          usage: { promptTokens: estimate, completionTokens: 0 },
        };
      },
    },
  },
};
