import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_REPLY_BYTES,
  errorReplyMessage,
  MAX_SUSPEND_NOTE,
  replyEvent,
} from '../../../engine/job/reply-body.js';

const JOB = '00000000-0000-4000-8000-0000000000aa';
const ID = `${JOB}:fetch`;

describe('Rules: a worker reply as an event', () => {
  it('refuses a message without a usable correlation id: it names no job', () => {
    expect(replyEvent({ body: '{}' })).toEqual({ ok: false, reason: 'the reply has no correlation id' });
    expect(replyEvent({ correlationId: '  ', body: '{}' })).toMatchObject({ ok: false });
    expect(replyEvent({ correlationId: 'not-a-job:fetch', body: '{}' })).toEqual({
      ok: false,
      reason: 'the correlation id is not "<job uuid>:<step>"',
      correlationId: 'not-a-job:fetch',
    });
  });

  it('turns a JSON object body into the reply of the step, with the attempt it echoes', () => {
    expect(replyEvent({ correlationId: ID, body: '{"n":1}', attempt: 2 })).toEqual({
      ok: true,
      jobId: JOB,
      correlationId: ID,
      event: { type: 'reply', step: 'fetch', attempt: 2, output: { n: 1 } },
    });
  });

  it('reads the job id case-insensitively and drops an attempt that is not an integer', () => {
    const parsed = replyEvent({ correlationId: `${JOB.toUpperCase()}:fetch`, body: '{}', attempt: 1.5 });
    expect(parsed).toMatchObject({ ok: true, jobId: JOB, event: { type: 'reply', attempt: undefined } });
  });

  it('fails the attempt when the body is not a JSON object', () => {
    for (const body of ['[1]', '"text"', 'not json']) {
      const parsed = replyEvent({ correlationId: ID, body });
      expect(parsed).toMatchObject({ ok: true, event: { type: 'failure', step: 'fetch' } });
      if (parsed.ok && parsed.event.type === 'failure')
        expect(parsed.event.message).toMatch(/^invalid reply: /);
    }
  });

  it('reads an empty body or null as an empty object', () => {
    for (const body of ['', ' null ']) {
      expect(replyEvent({ correlationId: ID, body })).toMatchObject({ event: { type: 'reply', output: {} } });
    }
  });

  it('fails the attempt when the body is over the size limit, counting bytes, not characters', () => {
    const body = JSON.stringify({ text: 'é'.repeat(10) });
    const size = Buffer.byteLength(body);
    expect(replyEvent({ correlationId: ID, body }, size)).toMatchObject({ event: { type: 'reply' } });
    expect(replyEvent({ correlationId: ID, body }, size - 1)).toMatchObject({
      event: {
        type: 'failure',
        message: `the reply is ${size} bytes; replies may be at most ${size - 1}`,
      },
    });
    expect(DEFAULT_MAX_REPLY_BYTES).toBe(1024 * 1024);
  });

  it('keeps a heartbeat a heartbeat, whatever its body', () => {
    expect(
      replyEvent({ correlationId: ID, body: 'x'.repeat(10), type: 'heartbeat', attempt: 1 }, 1),
    ).toMatchObject({
      event: { type: 'heartbeat', step: 'fetch', attempt: 1 },
    });
  });

  it('fails the attempt of a reply nested deeper than 64 levels, even 100,000 levels (200 KB)', () => {
    const deep = `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(replyEvent({ correlationId: ID, body: deep, attempt: 1 })).toEqual({
      ok: true,
      jobId: JOB,
      correlationId: ID,
      event: {
        type: 'failure',
        step: 'fetch',
        attempt: 1,
        message: 'invalid reply: body is nested more than 64 levels deep (objects and lists)',
      },
    });
  });

  it('completes the step for a reply without a type, or of type result', () => {
    for (const type of [undefined, 'result']) {
      expect(replyEvent({ correlationId: ID, body: '{"n":1}', type })).toMatchObject({
        event: { type: 'reply', output: { n: 1 } },
      });
    }
  });

  it('fails the attempt of a reply of any other type, naming it: never a silent success', () => {
    for (const type of ['Error', 'failed', 'ERROR', 'Result', 'Heartbeat', 'Abort', 'SUSPEND', 'done ']) {
      expect(replyEvent({ correlationId: ID, body: '{"error": "disk full"}', type, attempt: 2 })).toEqual({
        ok: true,
        jobId: JOB,
        correlationId: ID,
        event: {
          type: 'failure',
          step: 'fetch',
          attempt: 2,
          message: `unknown reply type ${JSON.stringify(type)}`,
        },
      });
    }
  });

  it('marks the failure of an error reply not retryable when the reply says so, and only then', () => {
    const error = { correlationId: ID, body: '{"error":"bad input"}', type: 'error' };
    expect(replyEvent({ ...error, retryable: false })).toMatchObject({
      event: { type: 'failure', step: 'fetch', message: 'bad input', retryable: false },
    });
    for (const retryable of [true, undefined]) {
      const parsed = replyEvent({ ...error, retryable });
      expect(parsed.ok && parsed.event.type === 'failure' && 'retryable' in parsed.event).toBe(false);
    }
    expect(replyEvent({ correlationId: ID, body: '{"n":1}', retryable: false })).toMatchObject({
      event: { type: 'reply', output: { n: 1 } },
    });
    const unknown = replyEvent({ correlationId: ID, body: '{}', type: 'failed', retryable: false });
    expect(unknown.ok && unknown.event.type === 'failure' && 'retryable' in unknown.event).toBe(false);
  });

  it('fails the attempt with the message of an error reply', () => {
    expect(replyEvent({ correlationId: ID, body: '{"error":"boom"}', type: 'error' })).toMatchObject({
      event: { type: 'failure', step: 'fetch', message: 'boom' },
    });
  });
});

describe('Rules: the message of an error reply', () => {
  it('takes the body’s error, else its message, as text', () => {
    expect(errorReplyMessage('{"error":"boom","message":"other"}')).toBe('boom');
    expect(errorReplyMessage('{"message":"other"}')).toBe('other');
    expect(errorReplyMessage('{"error":{"code":7}}')).toBe('{"code":7}');
  });

  it('takes the body’s text when it has no error, or a fixed sentence when it is empty', () => {
    expect(errorReplyMessage('  disk full  ')).toBe('disk full');
    expect(errorReplyMessage('   ')).toBe('the worker replied with an error');
  });

  it('takes the text of a body too deep to read as JSON', () => {
    const deep = `{"error": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(errorReplyMessage(deep)).toBe(deep.slice(0, 4000));
  });

  it('cuts the message to 4000 characters', () => {
    expect(errorReplyMessage(JSON.stringify({ error: 'x'.repeat(5000) }))).toHaveLength(4000);
    expect(errorReplyMessage('y'.repeat(5000))).toHaveLength(4000);
  });
});

describe('Rules: a suspend reply keeps its note', () => {
  const suspend = (body: string) => replyEvent({ correlationId: ID, body, type: 'suspend', attempt: 1 });

  it("takes the note from the body's reason, as the SDK sends it, else from error or message", () => {
    expect(suspend('{"reason":"waiting for a manager"}')).toMatchObject({
      ok: true,
      event: { type: 'suspend', step: 'fetch', attempt: 1, note: 'waiting for a manager' },
    });
    expect(suspend('{"message":"needs a second pair of eyes"}')).toMatchObject({
      event: { note: 'needs a second pair of eyes' },
    });
  });

  it('takes a body that is not a JSON object as the note itself', () => {
    expect(suspend('  ask finance  ')).toMatchObject({ event: { type: 'suspend', note: 'ask finance' } });
  });

  it('has no note when the body says nothing', () => {
    for (const body of ['', '{}', 'null']) {
      const parsed = suspend(body);
      expect(parsed).toMatchObject({ ok: true, event: { type: 'suspend' } });
      if (parsed.ok) expect(parsed.event).not.toHaveProperty('note');
    }
  });

  it(`cuts a long note to ${MAX_SUSPEND_NOTE} characters: it is kept in the step's state`, () => {
    const parsed = suspend(JSON.stringify({ reason: 'x'.repeat(100_000) }));
    expect(parsed.ok && parsed.event.type === 'suspend' ? parsed.event.note?.length : -1).toBe(
      MAX_SUSPEND_NOTE,
    );
  });
});
