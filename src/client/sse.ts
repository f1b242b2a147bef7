// Server-Sent Events over a fetch response body, parsed by eventsource-parser (the WHATWG
// event-stream format), so the client needs no EventSource: it works wherever fetch streams (Node,
// browsers) and can send headers.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

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
  let parsed: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => parsed.push(m), onRetry });
  let endsWithCR = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      // A CR that ends the stream ends its line; the parser waits to see whether an LF follows.
      if (done && endsWithCR) parser.feed('\n');
      else if (done) break;
      else {
        onActivity?.();
        const text = decoder.decode(value, { stream: true });
        if (text !== '') endsWithCR = text.endsWith('\r');
        parser.feed(text);
      }
      const ready = parsed;
      parsed = [];
      for (const m of ready) yield { id: m.id, event: m.event ?? 'message', data: m.data };
      if (done) break;
    }
  } finally {
    // Closes the connection when the consumer stops early; harmless when the stream already ended.
    await reader.cancel().catch(() => {});
  }
}
