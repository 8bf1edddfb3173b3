// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { EMPTY_MODEL, modelFormError, tagsOf } from './model-form.ts';

describe('the model form', () => {
  it('when the name is empty or too long, or endpoints are not JSON, then the form names the problem', () => {
    expect(modelFormError(EMPTY_MODEL)).toBe('models.nameRequired');
    expect(modelFormError({ ...EMPTY_MODEL, model_name: '  ' })).toBe('models.nameRequired');
    expect(modelFormError({ ...EMPTY_MODEL, model_name: 'x'.repeat(129) })).toBe('models.nameTooLong');
    expect(modelFormError({ ...EMPTY_MODEL, model_name: 'gpt-4o', endpoints: '{"openai":' })).toBe(
      'models.endpointsNotJson',
    );
  });
  it('when the form is complete, then it passes and tags split on commas', () => {
    expect(modelFormError({ ...EMPTY_MODEL, model_name: 'gpt-4o', endpoints: '["openai"]' })).toBeUndefined();
    expect(tagsOf('chat, fast,,vision ')).toEqual(['chat', 'fast', 'vision']);
  });
});
