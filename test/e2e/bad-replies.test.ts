import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import type { LogFields, Logger } from '../../functions/telemetry/telemetry.js';
import { prototypeFingerprint } from '../support/api-calls.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { metricValue } from '../support/metrics-text.js';
import { deleteQueues, eventually, openTestChannel, queueCounts, uniqueName } from '../support/rabbitmq.js';
import { reply, type ScriptedWorkers, startScriptedWorkers } from '../support/scripted-workers.js';
import { reportFigures } from '../support/soak.js';

const suffix = uniqueName('bad-replies');
const q = (name: string) => `${name}-${suffix}`;

const WORKFLOWS = `workflows:
  - name: steady
    steps:
      - { name: work, queue: ${q('work')} }
      - { name: more, queue: ${q('work')}, depends: [ work ] }
  - name: victim
    steps:
      - { name: held, queue: ${q('held')} }
  - name: keys
    steps:
      - { name: emit, queue: ${q('emit')} }
      - { name: each, task: per-item, depends: [ emit ] }
      - { name: merge, queue: ${q('merge')}, depends: [ each, emit ] }
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - { name: echo, queue: ${q('echo')} }
`;

/** JSON text whose objects have own `__proto__`, `constructor` and `prototype` keys (JSON.parse keeps them as data). */
const POLLUTING_INPUT =
  '{"__proto__": {"polluted": "input"}, "constructor": {"prototype": {"polluted": "input"}}, "prototype": {"polluted": "input"}, "n": 1}';
const EMITTED = JSON.parse(
  '{"__proto__": {"polluted": "emit"}, "constructor": {"prototype": {"polluted": "emit"}}, "prototype": "emit",' +
    ' "items": [{"__proto__": {"polluted": "item"}, "v": 1}, {"constructor": {"prototype": {"polluted": "item"}}, "v": 2}]}',
) as Record<string, unknown>;

type Published = { body: string | Buffer; correlationId?: string; type?: string };

describe('Bad replies on the real reply queue of serve (RabbitMQ and SQLite)', { timeout: 60_000 }, () => {
  let serve: TestServe;
  let workers: ScriptedWorkers;
  let inspector: { model: ChannelModel; channel: Channel };
  /** Requests of the `held` step, by job id: the test answers them itself. */
  const held = new Map<string, ConsumeMessage>();
  const fingerprint = prototypeFingerprint();
  /** What serve logged: message and fields. */
  const logged: { level: string; message: string; fields?: LogFields }[] = [];
  const logger: Logger = {
    debug: () => {},
    info: (message, fields) => logged.push({ level: 'info', message, fields }),
    warn: (message, fields) => logged.push({ level: 'warn', message, fields }),
    error: (message, fields) => logged.push({ level: 'error', message, fields }),
  };

  const start = async (workflow: string, body = '{}') => {
    const response = await serve.api<{ id: string }>('POST', `/api/workflow/${workflow}`, body);
    expect(response.status).toBe(201);
    return response.body.id;
  };
  const job = async (id: string) => (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body;
  const ended = (id: string) =>
    eventually(`job ${id} to end`, async () => {
      const document = await job(id);
      return document.status === 'running' ? undefined : document;
    });
  const publish = (message: Published) => {
    inspector.channel.sendToQueue(serve.replyQueue, Buffer.from(message.body), {
      ...(message.correlationId !== undefined ? { correlationId: message.correlationId } : {}),
      ...(message.type ? { type: message.type } : {}),
    });
  };

  beforeAll(async () => {
    serve = await startTestServe(WORKFLOWS, { logger });
    workers = await startScriptedWorkers(
      {
        [q('work')]: ({ input }) => [reply({ ...input, worked: true })],
        [q('emit')]: () => [reply(EMITTED)],
        // Each child answers with its own prototype keys, and its item.
        [q('echo')]: ({ input }) => [
          { body: `{"__proto__": {"polluted": "child"}, "item": ${JSON.stringify(input.item)}}` },
        ],
        [q('merge')]: ({ input }) => [reply(input)],
      },
      { delayMs: 20, connectionName: `switchyard-test-${suffix}` },
    );
    inspector = await openTestChannel();
    await inspector.channel.assertQueue(q('held'), { durable: true });
    await inspector.channel.consume(q('held'), (message) => {
      if (!message) return;
      held.set(String(message.properties.correlationId).split(':')[0] as string, message);
      inspector.channel.ack(message);
    });
  });

  afterAll(async () => {
    await inspector?.model.close().catch(() => {});
    await workers?.stop();
    await serve?.stop();
    await deleteQueues([
      ...['work', 'held', 'emit', 'echo', 'merge'].map(q),
      ...(serve ? [serve.replyQueue] : []),
    ]);
  });

  it('acknowledges, logs and counts every bad reply; the jobs they name fail clearly or go on; serve stays up', async () => {
    // Prepare: jobs that are running while the bad replies arrive.
    const steady = await Promise.all(
      Array.from({ length: 20 }, (_, n) => start('steady', JSON.stringify({ n }))),
    );
    const [untouched, oversized, notJson, list, tooDeep, unknownType] = await Promise.all(
      [1, 2, 3, 4, 5, 6].map(() => start('victim')),
    );
    await eventually('the held requests', () => held.size === 6);
    const unknownJob = crypto.randomUUID();

    // Act: every kind of bad reply, straight onto serve's reply queue.
    const malformed: Published[] = [
      { body: 'not json at all' },
      { body: '[1, 2, 3]' },
      { body: '{}', type: 'error' },
      { body: '{}', correlationId: '' },
      { body: '{}', correlationId: 'nope' },
      { body: '{}', correlationId: '12345:held' },
      { body: '{}', correlationId: ':' },
      { body: '{}', correlationId: unknownJob },
      { body: '{}', correlationId: `${unknownJob}:` },
      { body: Buffer.from([0xff, 0xfe, 0x00, 0x81]), correlationId: `not-a-uuid:${'x'.repeat(200)}` },
    ];
    const aboutUnknownJobs: Published[] = [
      { body: '{}', correlationId: `${unknownJob}:held` },
      { body: '{"error": "x"}', correlationId: `${unknownJob}:held`, type: 'error' },
      { body: '', correlationId: `${unknownJob}:held`, type: 'heartbeat' },
      { body: 'x'.repeat(1_100_000), correlationId: `${crypto.randomUUID()}:held` },
    ];
    const notAwaited: Published[] = [
      { body: '{}', correlationId: `${untouched}:no-such-step` },
      { body: '{}', correlationId: `${untouched}:__proto__` },
      { body: '{"late": true}', correlationId: `${steady[0]}:missing` },
    ];
    const failing: Published[] = [
      { body: `{"big": "${'x'.repeat(1_100_000)}"}`, correlationId: `${oversized}:held` },
      { body: 'this is not JSON', correlationId: `${notJson}:held` },
      { body: '["a", "list"]', correlationId: `${list}:held` },
      // 100,000 levels (200 KB): it parses, but overflowed the stack when stored and stalled its batch.
      { body: `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`, correlationId: `${tooDeep}:held` },
      { body: '{"error": "disk full"}', correlationId: `${unknownType}:held`, type: 'Error' },
    ];
    for (const message of [...malformed, ...aboutUnknownJobs, ...notAwaited, ...failing]) publish(message);

    // Assess: the jobs the bad replies named either failed with a clear error or are untouched.
    expect((await ended(oversized as string)).error).toMatchObject({
      step: 'held',
      attempt: 1,
      message: expect.stringMatching(/^the reply is 11000\d\d bytes; replies may be at most 1048576$/),
    });
    expect((await ended(notJson as string)).error?.message).toMatch(/^invalid reply: body is not JSON/);
    expect((await ended(list as string)).error?.message).toBe(
      'invalid reply: body must be a JSON object, got list',
    );
    expect((await ended(tooDeep as string)).error).toMatchObject({
      step: 'held',
      attempt: 1,
      message: 'invalid reply: body is nested more than 64 levels deep (objects and lists)',
    });
    expect(await ended(unknownType as string)).toMatchObject({
      status: 'failed',
      error: { step: 'held', attempt: 1, message: 'unknown reply type "Error"' },
    });
    const still = await job(untouched as string);
    expect(still.status).toBe('running');
    expect(still.steps.held).toMatchObject({ status: 'running', attempt: 1 });

    // Every message left the queue: acknowledged, none waiting, none held unacknowledged.
    await eventually(
      'the reply queue to be empty',
      async () => {
        const counts = await queueCounts(serve.replyQueue);
        return counts?.ready === 0 && counts.unacknowledged === 0;
      },
      30_000,
    );
    const metrics = (await serve.api<string>('GET', '/metrics')).body;
    const figures = {
      malformed: metricValue(metrics, 'switchyard_replies_malformed_total'),
      unknownJob: metricValue(metrics, 'switchyard_replies_ignored_total', { reason: 'unknown_job' }),
      notAwaited: metricValue(metrics, 'switchyard_replies_ignored_total', { reason: 'not_awaited' }),
      failedAttempts: metricValue(metrics, 'switchyard_step_attempts_failed_total'),
    };
    expect(figures).toEqual({
      malformed: malformed.length,
      unknownJob: aboutUnknownJobs.length,
      notAwaited: notAwaited.length,
      failedAttempts: failing.length,
    });
    expect((await serve.api('GET', '/healthz')).status).toBe(200);
    // Each was logged, with the reason.
    expect(logged.filter((line) => line.message === 'malformed reply ignored')).toHaveLength(
      malformed.length,
    );
    const ignored = logged.filter((line) => line.message === 'reply ignored');
    expect(ignored.filter((line) => line.fields?.reason === 'unknown job')).toHaveLength(
      aboutUnknownJobs.length,
    );
    expect(ignored.length).toBe(aboutUnknownJobs.length + notAwaited.length);
    expect(logged.filter((line) => line.level === 'error')).toEqual([]);

    // The jobs running all along completed, and the untouched victim completes when really answered.
    for (const id of steady) expect((await ended(id)).status).toBe('completed');
    const request = held.get(untouched as string) as ConsumeMessage;
    inspector.channel.sendToQueue(String(request.properties.replyTo), Buffer.from('{"finally": true}'), {
      correlationId: String(request.properties.correlationId),
    });
    expect(await ended(untouched as string)).toMatchObject({
      status: 'completed',
      result: { finally: true },
    });
    reportFigures('bad replies on RabbitMQ', {
      ...figures,
      published: malformed.length + aboutUnknownJobs.length + notAwaited.length + failing.length,
    });
  });

  it('keeps __proto__, constructor and prototype keys as data through input, merge, fan-out and fan-in', async () => {
    const id = await start('keys', POLLUTING_INPUT);
    const document = await ended(id);
    expect(document.status).toBe('completed');
    // The merge step echoed its input: `each` (the fan-in) first, then `emit`, first one wins.
    const expected = JSON.parse(
      '{"__proto__": {"polluted": "child"}, "items": [{"__proto__": {"polluted": "item"}, "v": 1},' +
        ' {"constructor": {"prototype": {"polluted": "item"}}, "v": 2}],' +
        ' "constructor": {"prototype": {"polluted": "emit"}}, "prototype": "emit"}',
    );
    expect(Object.keys(document.result ?? {}).sort()).toEqual([
      '__proto__',
      'constructor',
      'items',
      'prototype',
    ]);
    expect(JSON.stringify(document.result)).toBe(JSON.stringify(reorder(expected, document.result)));
    expect(Object.keys(document.input).sort()).toEqual(['__proto__', 'constructor', 'n', 'prototype']);
    const children = (
      await serve.api<{ children: { uuid: string }[] }>('GET', `/api/job/${id}/children?step=each`)
    ).body.children;
    const child = await job(children[0]?.uuid as string);
    expect(Object.keys(child.input).sort()).toEqual(['__proto__', 'constructor', 'item', 'prototype']);
    // Nothing reached a prototype in this process (serve runs in it).
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(prototypeFingerprint()).toBe(fingerprint);
  });
});

/** `expected` with its keys in the order `actual` has them, to compare JSON texts. */
function reorder(expected: Record<string, unknown>, actual: unknown): Record<string, unknown> {
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(actual as object))
    Object.defineProperty(ordered, key, {
      value: expected[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return ordered;
}
