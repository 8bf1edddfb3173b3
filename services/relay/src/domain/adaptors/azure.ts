import { type Adaptor, baseOf, OPENAI_PATHS, type RelayMode } from './types.ts';

/** The default Azure OpenAI API version when the channel's `other` is empty. */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Azure OpenAI (type 3): deployment URLs named after the model, `api-version` from `other`. */
export const azure: Adaptor = {
  name: 'Azure OpenAI',
  protocol: 'openai',
  modes: new Set<RelayMode>([
    'chat',
    'completions',
    'embeddings',
    'images',
    'image_edits',
    'image_variations',
    'speech',
    'transcriptions',
    'translations',
  ]),
  defaultBaseUrl: '',
  target(ch, mode, model) {
    // Azure deployment names cannot hold dots (gpt-3.5-turbo is deployed as gpt-35-turbo).
    const deployment = model.replaceAll('.', '');
    const version = ch.other || AZURE_DEFAULT_API_VERSION;
    return {
      url: `${baseOf(ch, azure)}/openai/deployments/${encodeURIComponent(deployment)}${OPENAI_PATHS[mode]}?api-version=${encodeURIComponent(version)}`,
      headers: { 'api-key': ch.key },
    };
  },
};
