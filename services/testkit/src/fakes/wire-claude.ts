/**
 * The Anthropic Messages answer (whole and as stream events) that the cloud-hosted Claude fakes
 * (Bedrock, Vertex AI) wrap in their own framing. Separate from fake-provider.ts so those fakes
 * stay standalone.
 */
export interface ClaudeReplyOptions {
  model: string;
  reply: string;
  inputTokens: number;
  toolCall?: { name: string; arguments: Record<string, unknown> } | undefined;
}

export function replyWords(text: string): string[] {
  const parts = text.split(' ');
  return parts.map((w, i) => (i < parts.length - 1 ? `${w} ` : w));
}

export function claudeMessage(o: ClaudeReplyOptions): Record<string, unknown> {
  const w = replyWords(o.reply);
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: o.model,
    content: o.toolCall
      ? [{ type: 'tool_use', id: 'toolu_fake', name: o.toolCall.name, input: o.toolCall.arguments }]
      : [{ type: 'text', text: o.reply }],
    stop_reason: o.toolCall ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: o.inputTokens, output_tokens: w.length },
  };
}

/** The stream's events in order (each an object with its `type`). */
export function claudeEvents(o: ClaudeReplyOptions): Record<string, unknown>[] {
  const w = replyWords(o.reply);
  const out: Record<string, unknown>[] = [
    {
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: o.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: o.inputTokens, output_tokens: 1 },
      },
    },
  ];
  if (o.toolCall) {
    out.push({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_fake', name: o.toolCall.name, input: {} },
    });
    out.push({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(o.toolCall.arguments) },
    });
  } else {
    out.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (const word of w)
      out.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } });
  }
  out.push({ type: 'content_block_stop', index: 0 });
  out.push({
    type: 'message_delta',
    delta: { stop_reason: o.toolCall ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: w.length },
  });
  out.push({ type: 'message_stop' });
  return out;
}
