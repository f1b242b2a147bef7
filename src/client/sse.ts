// A Server-Sent Events parser over a fetch response body (WHATWG event-stream format), so the client
// needs no EventSource: it works wherever fetch streams (Node 18+, browsers) and can send headers.

export interface SseMessage {
  /** The `id:` of this message, or undefined when it carried none. */
  id: string | undefined;
  /** The `event:` field; "message" when absent. */
  event: string;
  data: string;
}

/** Yields each dispatched message; ends when the stream ends, throws when the connection breaks. */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  onRetry?: (ms: number) => void,
  /** Called for every chunk received, keepalive comments included (idle detection). */
  onActivity?: () => void,
): AsyncGenerator<SseMessage, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  let sawField = false;
  let firstChunk = true;
  let skipLF = false;

  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onActivity?.();
      buffer += decoder.decode(value, { stream: true });
      if (firstChunk && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        firstChunk = false;
      }
      for (;;) {
        // A CR that ended the previous chunk may be the first half of a CRLF.
        if (skipLF) {
          if (buffer.length === 0) break;
          if (buffer[0] === '\n') buffer = buffer.slice(1);
          skipLF = false;
        }
        const nl = findLineEnd(buffer);
        if (nl === -1) break;
        const line = buffer.slice(0, nl);
        let next = nl + 1;
        if (buffer[nl] === '\r') {
          if (nl + 1 >= buffer.length) skipLF = true;
          else if (buffer[nl + 1] === '\n') next = nl + 2;
        }
        buffer = buffer.slice(next);

        if (line === '') {
          if (sawField && data.length > 0) {
            yield { id, event: event || 'message', data: data.join('\n') };
          }
          data = [];
          event = '';
          id = undefined;
          sawField = false;
          continue;
        }
        if (line.startsWith(':')) continue; // comment / keepalive
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        sawField = true;
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id') {
          if (!value.includes('\0')) id = value;
        } else if (field === 'retry') {
          if (/^\d+$/.test(value)) onRetry?.(Number(value));
        }
      }
    }
  } finally {
    // Closes the connection when the consumer stops early; harmless when the stream already ended.
    await reader.cancel().catch(() => {});
  }
}

function findLineEnd(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}
