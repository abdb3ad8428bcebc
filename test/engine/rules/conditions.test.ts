import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../engine/index.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { stepsOf } from '../../support/steps-of.js';

const ORDER = `workflows:
  - name: order
    steps:
      - name: load
      - name: big-order
        depends: [ load ]
        when: input.total > 100
      - name: small-order
        depends: [ load ]
        when: "!(input.total > 100)"
      - name: ship
        depends: [ big-order, small-order ]
`;

async function world(yaml: string) {
  const w = new SimulatedWorld();
  await w.register(yaml);
  return w;
}

/** Replies to every request with its body plus `extra`, until nothing more is sent. */
async function runAll(w: SimulatedWorld, extra: Record<string, JsonObject> = {}): Promise<string[]> {
  const sent: string[] = [];
  for (let requests = w.take(); requests.length; requests = w.take()) {
    for (const request of requests) {
      sent.push(request.step);
      await w.reply(request, { ...request.body, ...extra[request.step] });
    }
  }
  return sent;
}

describe('Rules: conditions (when:)', () => {
  it.each([
    [150, 'big-order'],
    [150.5, 'big-order'],
    [100, 'small-order'],
  ])(
    'with a total of %s runs only %s, and the join runs on the branch that completed',
    async (total, branch) => {
      const w = await world(ORDER);
      const id = await w.start('order', { total });
      const sent = await runAll(w, { [branch]: { branch } });
      expect(sent).toEqual(['load', branch, 'ship']);
      const job = await w.job(id);
      expect(job.status).toBe('completed');
      expect(job.result).toEqual({ total, branch });
      const other = branch === 'big-order' ? 'small-order' : 'big-order';
      expect(stepsOf(job)[other]).toMatchObject({ status: 'skipped', attempts: 0 });
      expect(stepsOf(job)[other]?.skipReason).toContain('"when" is false');
      expect(stepsOf(job)[other]?.output).toBeUndefined();
    },
  );

  it('skips a step whose dependencies were all skipped, without evaluating its own condition', async () => {
    const w = await world(`workflows:
  - name: chain
    steps:
      - name: a
        when: input.go
      - name: b
        depends: [ a ]
        when: input.missing.key
      - name: c
        depends: [ b ]
`);
    const id = await w.start('chain', { go: false });
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({});
    expect(Object.values(stepsOf(job)).map((step) => step?.status)).toEqual([
      'skipped',
      'skipped',
      'skipped',
    ]);
    expect(stepsOf(job).c?.skipReason).toBe('every step it depends on was skipped');
  });

  it('sees earlier steps through steps, and the job through job', async () => {
    const w = await world(`workflows:
  - name: reach
    steps:
      - name: load
      - name: price
        depends: [ load ]
      - name: audit
        depends: [ price ]
        when: steps.load.region == "eu" && job.input.audit == true
`);
    const id = await w.start('reach', { audit: true });
    const sent = await runAll(w, { load: { region: 'eu' }, price: { total: 3 } });
    expect(sent).toEqual(['load', 'price', 'audit']);
    expect((await w.job(id)).status).toBe('completed');
  });

  it('fails the step, without retrying, when the condition cannot be evaluated, naming the expression', async () => {
    const w = await world(`workflows:
  - name: broken
    steps:
      - name: a
        retries: 3
        when: input.total > 100
`);
    const id = await w.start('broken', {});
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.step).toBe('a');
    expect(job.error?.message).toContain('"when" expression "input.total > 100"');
    expect(job.error?.message).toContain('total');
  });

  it('fails the step when a condition gives something other than a boolean at run time', async () => {
    const w = await world(`workflows:
  - name: loose
    steps:
      - name: a
        when: input.flag
`);
    const id = await w.start('loose', { flag: 'yes' });
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toContain('boolean');
  });

  // Issue 28: on JavaScript's RegExp this input held the whole manager for 74 s, doubling per character.
  it('decides a matches() condition in linear time: 32 × "a" + "!" against a nested quantifier', async () => {
    const w = await world(`workflows:
  - name: names
    steps:
      - name: greet
        when: input.name.matches("^([a-zA-Z0-9]+\\\\s?)*$")
`);
    const id = await w.start('names', { name: `${'a'.repeat(32)}!` });
    expect(w.take()).toEqual([]);
    expect(stepsOf(await w.job(id)).greet?.status).toBe('skipped');
    const other = await w.start('names', { name: 'ada lovelace' });
    expect(w.take().map((request) => request.jobId)).toEqual([other]);
  });

  it('refuses at registration a matches() pattern RE2 does not accept, saying why', async () => {
    const w = new SimulatedWorld();
    await expect(
      w.register(`workflows:
  - name: names
    steps:
      - name: greet
        when: input.name.matches("(a)\\\\1")
`),
    ).rejects.toThrow(/matches\(\): RE2 refuses the pattern .*invalid escape sequence/);
  });

  it('decides the same way when the job is retried', async () => {
    const w = await world(`${ORDER}      - name: fail-late
        depends: [ ship ]
`);
    const id = await w.start('order', { total: 500 });
    for (let requests = w.take(); requests.length; requests = w.take()) {
      for (const request of requests) {
        if (request.step === 'fail-late') await w.reply(request, { error: 'down' }, { type: 'error' });
        else await w.reply(request, request.body);
      }
    }
    expect((await w.job(id)).status).toBe('failed');
    await w.manager.retry(id);
    await w.manager.drain();
    expect(w.take().map((request) => request.step)).toEqual(['fail-late']);
    expect(stepsOf(await w.job(id))['small-order']?.status).toBe('skipped');
  });
});

describe('Rules: input mapping and defaults (input:, params:)', () => {
  const MAPPED = `workflows:
  - name: pipeline
    params: { currency: EUR, region: eu }
    steps:
      - name: load-order
      - name: price
        depends: [ load-order ]
        params: { region: us, rounding: 2 }
      - name: charge
        depends: [ price ]
        input: '{"orderId": steps["load-order"].orderId, "total": input.total}'
`;

  it('sends params under the input, the step over the workflow, and records what was sent', async () => {
    const w = await world(MAPPED);
    const id = await w.start('pipeline', { orderId: 'o-1', currency: 'USD' });
    const [load] = w.take();
    expect(load?.body).toEqual({ region: 'eu', orderId: 'o-1', currency: 'USD' });
    await w.reply(load!, { orderId: 'o-1', lines: 3 });
    const [price] = w.take();
    expect(price?.body).toEqual({ currency: 'EUR', region: 'us', rounding: 2, orderId: 'o-1', lines: 3 });
    await w.reply(price!, { total: 42 });
    const [charge] = w.take();
    expect(charge?.body).toEqual({ currency: 'EUR', region: 'eu', orderId: 'o-1', total: 42 });
    const steps = stepsOf(await w.job(id));
    expect(steps.charge?.input).toEqual(charge?.body);
    expect(steps.price?.input).toEqual(price?.body);
  });

  it('records no input for a step sent exactly its merged input', async () => {
    const w = await world(ORDER);
    const id = await w.start('order', { total: 1 });
    await runAll(w);
    expect(stepsOf(await w.job(id)).load?.input).toBeUndefined();
  });

  it('sends every retry what the first attempt was sent', async () => {
    const w = await world(`workflows:
  - name: retried
    steps:
      - name: a
      - name: b
      - name: c
        depends: [ a ]
        retries: 1
        input: '{"seen": size(steps)}'
`);
    await w.start('retried', {});
    const first = w.take();
    await w.reply(first.find((r) => r.step === 'a')!, {});
    const [c1] = w.take();
    expect(c1?.body).toEqual({ seen: 1 });
    await w.reply(first.find((r) => r.step === 'b')!, {});
    await w.reply(c1!, { error: 'again' }, { type: 'error' });
    const [c2] = w.take();
    expect(c2?.body).toEqual({ seen: 1 });
  });

  it('fails the step when the mapping does not give a map', async () => {
    const w = await world(`workflows:
  - name: bad-map
    steps:
      - name: a
        input: input.items
`);
    const id = await w.start('bad-map', { items: [1, 2] });
    expect(w.take()).toEqual([]);
    const job = await w.job(id);
    expect(job.status).toBe('failed');
    expect(job.error?.message).toContain('"input" expression "input.items"');
  });

  it('fans out over the mapped input', async () => {
    const w = await world(`workflows:
  - name: fan
    steps:
      - name: load
      - name: each
        depends: [ load ]
        task: per-line
        input: '{"lines": input.order.lines, "orderId": input.order.id}'
    tasks:
      - name: per-line
        itemListKey: lines
        steps:
          - name: price-line
            input: '{"line": input.line, "order": parent.input.customer, "index": parent.index}'
`);
    const id = await w.start('fan', { customer: 'c-9' });
    await w.reply(w.take()[0]!, { order: { id: 'o-2', lines: ['x', 'y'] } });
    const children = w.take();
    expect(children.map((request) => request.body)).toEqual([
      { line: 'x', order: 'c-9', index: 0 },
      { line: 'y', order: 'c-9', index: 1 },
    ]);
    for (const request of children) await w.reply(request, { line: `${request.body.line}!` });
    const job = await w.job(id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ lines: ['x!', 'y!'] });
  });
});

describe('Rules: handled errors (continueOnError)', () => {
  const CHARGE = `workflows:
  - name: pay
    steps:
      - name: charge
        retries: 1
        continueOnError: true
      - name: refund
        depends: [ charge ]
        when: has(input.error)
      - name: receipt
        depends: [ charge ]
        when: "!has(input.error)"
      - name: notify
        depends: [ refund, receipt ]
`;

  it('hands the error to the dependents once the retries are spent, and the job goes on to complete', async () => {
    const w = await world(CHARGE);
    const id = await w.start('pay', { amount: 5 });
    await w.reply(w.take()[0]!, { error: 'card declined' }, { type: 'error' });
    const [retry] = w.take();
    expect(retry?.attempt).toBe(2);
    await w.reply(retry!, { error: 'card declined again' }, { type: 'error', attempt: 2 });
    const [refund] = w.take();
    expect(refund?.step).toBe('refund');
    expect(refund?.body).toEqual({
      error: { step: 'charge', message: 'card declined again', attempts: 2, at: w.now },
    });
    await w.reply(refund!, { refunded: true });
    const [notify] = w.take();
    expect(notify?.body).toEqual({ refunded: true });
    await w.reply(notify!, { sent: true });
    const job = await w.job(id);
    expect(job.status).toBe('completed');
    expect(job.error).toBeUndefined();
    expect(stepsOf(job).charge).toMatchObject({
      status: 'failed',
      handled: true,
      error: 'card declined again',
    });
    expect(stepsOf(job).receipt?.status).toBe('skipped');
  });

  it('takes the normal branch when the step succeeds', async () => {
    const w = await world(CHARGE);
    const id = await w.start('pay', {});
    expect(await runAll(w, { charge: { charged: true } })).toEqual(['charge', 'receipt', 'notify']);
    expect((await w.job(id)).status).toBe('completed');
  });

  it('a handled failure on a terminal step still completes the job, with no output in the result', async () => {
    const w = await world(`workflows:
  - name: best-effort
    steps:
      - name: main
      - name: ping
        continueOnError: true
`);
    const id = await w.start('best-effort', {});
    for (const request of w.take()) {
      if (request.step === 'ping') await w.reply(request, { error: 'unreachable' }, { type: 'error' });
      else await w.reply(request, { done: 1 });
    }
    const job = await w.job(id);
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ done: 1 });
  });

  it('a failed condition on a continueOnError step is handled too', async () => {
    const w = await world(`workflows:
  - name: guarded
    steps:
      - name: a
        when: input.missing > 1
        continueOnError: true
      - name: b
        depends: [ a ]
`);
    const id = await w.start('guarded', {});
    const [b] = w.take();
    expect(b?.step).toBe('b');
    expect((b?.body.error as JsonObject | undefined)?.message).toContain('"when" expression');
    await w.reply(b!, {});
    expect((await w.job(id)).status).toBe('completed');
  });

  it('keeps a handled failure when the job is retried after failing elsewhere', async () => {
    const w = await world(`workflows:
  - name: two
    steps:
      - name: soft
        continueOnError: true
      - name: hard
        depends: [ soft ]
`);
    const id = await w.start('two', {});
    await w.reply(w.take()[0]!, { error: 'soft fail' }, { type: 'error' });
    await w.reply(w.take()[0]!, { error: 'hard fail' }, { type: 'error' });
    expect((await w.job(id)).status).toBe('failed');
    await w.manager.retry(id);
    await w.manager.drain();
    expect(w.take().map((request) => request.step)).toEqual(['hard']);
  });
});

describe('Rules: handled errors in a fan-out', () => {
  it.each([
    ['all at once', ''],
    ['one at a time', '        concurrency: 1\n'],
  ])(
    'completes when every child ended, %s, with failed children as their errors in the list',
    async (_, limit) => {
      const w = await world(`workflows:
  - name: lines
    steps:
      - name: each
        task: per-line
        continueOnError: true
      - name: report
        depends: [ each ]
    tasks:
      - name: per-line
        itemListKey: lines
${limit}        steps:
          - name: price-line
`);
      const id = await w.start('lines', { lines: ['a', 'bad', 'c'] });
      for (let requests = w.take(); requests.length; requests = w.take()) {
        for (const request of requests) {
          if (request.body.line === 'bad') await w.reply(request, { error: 'no price' }, { type: 'error' });
          else if (request.step === 'price-line') await w.reply(request, { line: `${request.body.line}=1` });
          else await w.reply(request, request.body);
        }
      }
      const job = await w.job(id);
      expect(job.status).toBe('completed');
      const lines = job.result?.lines as JsonObject[];
      expect(lines[0]).toBe('a=1');
      expect(lines[2]).toBe('c=1');
      expect(lines[1]).toMatchObject({ error: { step: 'price-line', message: 'no price', attempts: 1 } });
    },
  );
});
