// The event-stream parser against the WHATWG format's corner cases, fed in awkward chunks.
import { describe, expect, it } from 'vitest';
import { parseSse, type SseMessage } from '../../src/client/sse.ts';

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === 'string' ? enc.encode(c) : c);
      controller.close();
    },
  });
}

async function parse(chunks: (string | Uint8Array)[]): Promise<{ messages: SseMessage[]; retries: number[]; activity: number }> {
  const messages: SseMessage[] = [];
  const retries: number[] = [];
  let activity = 0;
  for await (const m of parseSse(streamOf(chunks), (ms) => retries.push(ms), () => activity++)) messages.push(m);
  return { messages, retries, activity };
}

/** Every way of cutting `text` in two, plus byte by byte. */
function splits(text: string): (string | Uint8Array)[][] {
  const bytes = new TextEncoder().encode(text);
  const out: (string | Uint8Array)[][] = [Array.from(bytes, (b) => new Uint8Array([b]))];
  for (let i = 1; i < bytes.length; i++) out.push([bytes.slice(0, i), bytes.slice(i)]);
  return out;
}

describe('parseSse', () => {
  it('parses id, event and data fields and reports retry', async () => {
    const { messages, retries } = await parse(['retry: 2000\n\nid: 1\nevent: step\ndata: {"n":1}\n\n: keepalive\n\nid: 2\ndata: plain\n\n']);
    expect(retries).toEqual([2000]);
    expect(messages).toEqual([
      { id: '1', event: 'step', data: '{"n":1}' },
      { id: '2', event: 'message', data: 'plain' },
    ]);
  });

  it('gives the same messages however the bytes are chunked, with LF, CRLF or CR line ends and multi-byte text', async () => {
    for (const nl of ['\n', '\r\n', '\r']) {
      const text = ['id: 7', 'event: agent', 'data: première ligne', 'data: 😀 second', '', 'data:no-space', '', ''].join(nl);
      const expected = [
        { id: '7', event: 'agent', data: 'première ligne\n😀 second' },
        { id: undefined, event: 'message', data: 'no-space' },
      ];
      for (const chunks of splits(text)) expect((await parse(chunks)).messages).toEqual(expected);
    }
  });

  it('ignores comments, unknown fields, a leading BOM, ids with NUL and blocks without data', async () => {
    const { messages, activity } = await parse(['\uFEFF: hello\nfoo: bar\nid: a\u0000b\ndata: x\n\nevent: lonely\n\nretry: soon\ndata\n\n']);
    expect(messages).toEqual([
      { id: undefined, event: 'message', data: 'x' },
      { id: undefined, event: 'message', data: '' },
    ]);
    expect(activity).toBe(1);
  });

  it('drops an unfinished message when the stream ends', async () => {
    const { messages } = await parse(['id: 1\ndata: done\n\nid: 2\ndata: cut off']);
    expect(messages.map((m) => m.id)).toEqual(['1']);
  });

  it('throws when the connection breaks, after the messages that arrived', async () => {
    const enc = new TextEncoder();
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 0) controller.enqueue(enc.encode('id: 1\ndata: a\n\n'));
        else controller.error(new TypeError('terminated'));
      },
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const m of parseSse(body)) seen.push(m.data);
      })(),
    ).rejects.toThrow('terminated');
    expect(seen).toEqual(['a']);
  });
});
