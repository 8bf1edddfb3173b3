import { describe, expect, it } from 'vitest';
import { openaiToClaudeRequest } from './claude.ts';
import { geminiToOpenAIRequest, openaiToGeminiRequest } from './gemini.ts';
import { geminiSchemaToJsonSchema, geminiToolChoice } from './schema.ts';

describe('schemas and tool choice between formats', () => {
  it('when a Gemini schema has upper-case types, nullable, anyOf and propertyOrdering, then it becomes JSON Schema', () => {
    expect(
      geminiSchemaToJsonSchema({
        type: 'OBJECT',
        propertyOrdering: ['a', 'b'],
        properties: {
          a: { type: 'STRING', nullable: true, format: 'date-time' },
          b: { type: 'ARRAY', items: { type: 'NUMBER' }, minItems: 1 },
          c: { anyOf: [{ type: 'INTEGER' }, { type: 'BOOLEAN' }], nullable: true },
          d: { enum: ['x', 'y'] },
        },
        required: ['b'],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        a: { type: ['string', 'null'], format: 'date-time' },
        b: { type: 'array', items: { type: 'number' }, minItems: 1 },
        c: { anyOf: [{ type: 'integer' }, { type: 'boolean' }, { type: 'null' }] },
        d: { type: 'string', enum: ['x', 'y'] },
      },
      required: ['b'],
    });
  });

  it('when Gemini function calling modes arrive, then each becomes the OpenAI tool choice', () => {
    const tools = ['a', 'b', 'c'].map((name) => ({ type: 'function' as const, function: { name } }));
    const mode = (m: string, names?: string[]) =>
      geminiToolChoice({ functionCallingConfig: { mode: m, allowedFunctionNames: names } }, tools);
    expect(mode('AUTO').choice).toBe('auto');
    expect(mode('VALIDATED').choice).toBe('auto');
    expect(mode('NONE').choice).toBe('none');
    expect(mode('ANY').choice).toBe('required');
    expect(mode('ANY', ['b'])).toEqual({ choice: { type: 'function', function: { name: 'b' } }, tools: [tools[1]] });
    expect(mode('ANY', ['a', 'c'])).toEqual({ choice: 'required', tools: [tools[0], tools[2]] });
    expect(geminiToolChoice(undefined, tools)).toEqual({ tools });
  });

  it('when a Gemini request has generation settings, then the OpenAI request carries them', () => {
    const req = geminiToOpenAIRequest(
      {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        generationConfig: {
          candidateCount: 2,
          seed: 7,
          presencePenalty: 0.5,
          frequencyPenalty: 0.25,
          responseMimeType: 'application/json',
        },
        tools: [{ googleSearch: {} }],
        toolConfig: { functionCallingConfig: { mode: 'NONE' } },
      },
      'm',
      false,
    );
    expect(req).toMatchObject({
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      response_format: { type: 'json_object' },
      tool_choice: 'none',
    });
    expect(req.tools).toBeUndefined();
  });

  it('when an OpenAI request goes to Gemini, then JSON Schema tools, tool choice and response_format are kept', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false };
    const out = openaiToGeminiRequest({
      model: 'gemini-2.5-pro',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'f', parameters: schema } }],
      tool_choice: 'auto',
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
      seed: 3,
    });
    expect(out.tools).toEqual([{ functionDeclarations: [{ name: 'f', parametersJsonSchema: schema }] }]);
    expect(out.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(out.generationConfig).toEqual({ seed: 3, responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('when a Gemini request spells the schema parameters_json_schema (google-genai 3.6) or in snake case, then the tool keeps its full parameters', () => {
    const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const req = geminiToOpenAIRequest(
      {
        contents: [{ role: 'user', parts: [{ text: 'read it' }] }],
        system_instruction: { parts: [{ text: 'Be brief.' }] },
        tools: [{ function_declarations: [{ name: 'read_file', parameters_json_schema: schema }] }],
        tool_config: { functionCallingConfig: { mode: 'ANY' } },
      },
      'gemini-x',
      false,
    );
    expect(req.tools).toEqual([{ type: 'function', function: { name: 'read_file', parameters: schema } }]);
    expect(req.tool_choice).toBe('required');
    expect(req.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect((openaiToClaudeRequest(req, 'claude-x').tools as unknown[])[0]).toEqual({
      name: 'read_file',
      input_schema: schema,
    });
  });

  it("when an OpenAI request asks Claude for JSON, then the system prompt states the schema after the caller's own", () => {
    const out = openaiToClaudeRequest(
      {
        model: 'claude',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
        response_format: { type: 'json_object' },
      },
      'claude-3-5-sonnet',
    );
    expect(out.system).toBe('Be brief.\nRespond with a single JSON object only, with no other text.');
  });
});
