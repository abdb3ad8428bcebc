import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import {
  isJsonObject,
  type Json,
  type JsonObject,
  loadWorkflows,
  NAME_PATTERN,
} from '../../../engine/index.js';
import type { ApiDeps } from '../../../functions/api/router.js';
import { ManagerError } from '../../../functions/manager/errors.js';
import { callApi, errorOf, prototypeFingerprint, worldApi } from '../../support/api-calls.js';
import { CORPUS, CORPUS_DIR, hugeDefinition, PARSER_ATTACKS } from '../../support/definition-corpus.js';
import { shapeArbitrary, toYaml } from '../../support/random-workflows.js';
import { type ServeProcess, spawnServe } from '../../support/serve-process.js';
import { SimulatedWorld } from '../../support/simulated-world.js';
import { reportFigures, scaled } from '../../support/soak.js';

const RUNS = scaled(150, 3000, 'FUZZ_RUNS');
const MiB = 1024 * 1024;
const BASES = [
  join(import.meta.dirname, '../../../examples/word-counts/workflows.yaml'),
  join(import.meta.dirname, '../../infra/fixtures/workflows.yaml'),
];

function freshApi(maxBodyBytes = 4 * MiB): { world: SimulatedWorld; deps: ApiDeps } {
  const world = new SimulatedWorld();
  return { world, deps: worldApi(world, { maxBodyBytes }) };
}

/**
 * The workflow name a body claims, so that the path matches it and the validation errors show; a
 * claimed name that is none (`1starts-with-a-digit`) cannot be in the path, which refuses it first.
 */
function nameIn(text: string): string {
  const claimed = /^\s*-?\s*name:\s*(\S+)/m.exec(text)?.[1];
  return claimed && NAME_PATTERN.test(claimed) ? claimed : 'corpus';
}

/**
 * PUTs a definition; resolves with the status. A refusal must be a 4xx with a JSON error; an
 * acceptance must leave a workflow registered.
 */
async function putDefinition(deps: ApiDeps, name: string, body: string): Promise<number> {
  const response = await callApi(deps, {
    method: 'PUT',
    path: `/api/workflow/${encodeURIComponent(name)}`,
    body,
  });
  expect(response.headers?.['content-type']).toContain('application/json');
  if (response.status >= 400) {
    expect(response.status, response.body).toBeLessThan(500);
    expect(errorOf(response).message.length).toBeGreaterThan(0);
  } else {
    expect([200, 201]).toContain(response.status);
  }
  return response.status;
}

/** Where the API's message differs from the CLI's: it checks the body before parsing it. */
const API_MESSAGES: Record<string, string[]> = {
  'empty.yaml': ['the body must hold the workflow definition (YAML or JSON)'],
};

const figures = { corpusFiles: 0, generatedDocuments: 0, mutatedDefinitions: 0, acceptedByChance: 0 };

describe('PUT /api/workflow/{name}: broken and generated definitions', () => {
  let before: string;
  beforeAll(() => {
    before = prototypeFingerprint();
  });
  afterAll(() => {
    expect(prototypeFingerprint()).toBe(before);
    reportFigures('definitions through PUT', figures);
  });

  it('refuses every file of the corpus with the validation errors, registering nothing', async () => {
    const { world, deps } = freshApi();
    for (const [file, fragments] of Object.entries(CORPUS)) {
      const body = await readFile(join(CORPUS_DIR, file), 'utf8');
      const response = await callApi(deps, { method: 'PUT', path: `/api/workflow/${nameIn(body)}`, body });
      expect(response.status, `${file}: ${response.body}`).toBe(400);
      const error = errorOf(response);
      expect(error.code).toBe('bad_request');
      for (const fragment of API_MESSAGES[file] ?? fragments) expect(error.message, file).toContain(fragment);
      figures.corpusFiles++;
    }
    expect(await world.store.listWorkflows()).toEqual([]);
  });

  it('refuses a definition over 1 MiB (400), and a body over the limit before reading it (413)', async () => {
    const body = hugeDefinition();
    const roomy = await callApi(freshApi(4 * MiB).deps, { method: 'PUT', path: '/api/workflow/huge', body });
    expect([roomy.status, errorOf(roomy).message]).toEqual([
      400,
      'PUT /api/workflow/huge: the definition is larger than 1048576 bytes',
    ]);
    const tight = await callApi(freshApi(256 * 1024).deps, {
      method: 'PUT',
      path: '/api/workflow/huge',
      body,
    });
    expect([tight.status, errorOf(tight).code]).toEqual([413, 'payload_too_large']);
  });

  it('answers random JSON and YAML documents with a clear error or a registration, never a crash', async () => {
    const { deps } = freshApi();
    const document = fc.oneof(
      fc.jsonValue({ maxDepth: 6 }),
      fc.record({
        workflows: fc.array(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), { maxLength: 3 }),
      }),
      fc.record({ name: fc.string(), steps: fc.jsonValue({ maxDepth: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(document, fc.boolean(), async (value, asYaml) => {
        const body = asYaml ? stringifyYaml(value) : JSON.stringify(value);
        figures.generatedDocuments++;
        const status = await putDefinition(deps, nameIn(body), body);
        if (status < 300) figures.acceptedByChance++;
      }),
      { numRuns: RUNS },
    );
  });

  it('answers YAML token soup (anchors, aliases, tags, flow and block mixed) with a clear error', async () => {
    const { deps } = freshApi();
    const token = fc.oneof(
      fc.constantFrom(
        'workflows:',
        '- name: a',
        'steps:',
        'depends: [a]',
        'task: t',
        'tasks:',
        'itemListKey: items',
        '  ',
        '    ',
        '\n',
        '\t',
        ':',
        ': ',
        '- ',
        '[',
        ']',
        '{',
        '}',
        ',',
        '&a ',
        '*a',
        '&b ',
        '*b',
        '<<: *a',
        '!!binary ',
        '!!map ',
        '!tag ',
        '%YAML 1.2\n',
        '---\n',
        '...\n',
        '? ',
        '|\n',
        '>\n',
        '# c\n',
        '"',
        "'",
        '__proto__: ',
        'constructor: ',
        'prototype: ',
        '~',
        'null',
        '0x1F',
        '1e400',
        '.nan',
        '2001-12-14',
      ),
      fc.string({ maxLength: 8 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(token, { maxLength: 80 }), async (tokens) => {
        const body = tokens.join('');
        figures.generatedDocuments++;
        expect(() => loadWorkflows(body, { allowBare: true })).not.toThrow();
        await putDefinition(deps, nameIn(body), body);
      }),
      { numRuns: RUNS },
    );
  });

  it('handles mutated valid definitions: refused clearly, or registered and runnable', async () => {
    const bases: JsonObject[] = [];
    for (const file of BASES) bases.push(parseYaml(await readFile(file, 'utf8')) as JsonObject);
    const base = fc.oneof(
      fc.constantFrom(...bases),
      shapeArbitrary.map((shape) => parseYaml(toYaml(shape)) as JsonObject),
    );
    await fc.assert(
      fc.asyncProperty(
        base,
        fc.array(mutationArbitrary, { minLength: 1, maxLength: 4 }),
        async (valid, mutations) => {
          const mutated = structuredClone(valid);
          for (const mutation of mutations) mutate(mutated, mutation);
          figures.mutatedDefinitions++;
          const body = mutations.length % 2 ? JSON.stringify(mutated) : stringifyYaml(mutated);
          const { workflows, errors } = loadWorkflows(body);
          if (errors.length) {
            for (const error of errors) expect(error.message.length).toBeGreaterThan(0);
            return;
          }
          // Valid after all: it must register and run a job without an uncaught error.
          figures.acceptedByChance++;
          const world = new SimulatedWorld();
          for (const workflow of workflows) {
            await world.manager.registerWorkflow(workflow);
            await runToTheEnd(world, workflow.name);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('PUT /api/workflow/{name}: attacks on the YAML parser, against `switchyard serve` as a process', {
  timeout: 60_000,
}, () => {
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.kill('SIGKILL');
  });

  const put = async (url: string, file: string, timeoutMs: number) => {
    const body = await readFile(join(CORPUS_DIR, file), 'utf8');
    const response = await fetch(`${url}/api/workflow/attack`, {
      method: 'PUT',
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, body: await response.text() };
  };
  const healthy = async (url: string) =>
    (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined))?.status;

  it('stays up after deeply nested lists, sent twice', async () => {
    serve = await spawnServe(['--bus', 'memory', '--db', ':memory:']);
    const url = serve.url;
    const first = await put(url, PARSER_ATTACKS.deepNesting, 5_000);
    expect(first.status).toBe(400);
    const second = await put(url, PARSER_ATTACKS.deepNesting, 5_000).catch(async (error: Error) => {
      await new Promise((resolve) => serve?.child.once('exit', resolve).once('close', resolve));
      const ended = `serve ended with ${serve?.child.signalCode ?? serve?.child.exitCode}`;
      return { status: 0, body: `${error.message}: ${ended}` };
    });
    expect(second.status, second.body).toBe(400);
    expect(await healthy(url)).toBe(200);
    await serve.kill('SIGKILL');
  });

  it('refuses a YAML alias bomb within seconds and stays responsive', async () => {
    serve = await spawnServe(['--bus', 'memory', '--db', ':memory:']);
    const url = serve.url;
    const started = Date.now();
    const response = await put(url, PARSER_ATTACKS.aliasBomb, 5_000).catch((error: Error) => ({
      status: 0,
      body: `no answer within 5 s (${error.message})`,
    }));
    expect(response.status, response.body).toBe(400);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await healthy(url)).toBe(200);
    await serve.kill('SIGKILL');
  });
});

/** Starts a job with a list under every plausible key and answers every request until it ends. */
async function runToTheEnd(world: SimulatedWorld, workflow: string): Promise<void> {
  const list = [{ id: 'a' }, 2, 'three'];
  const input: JsonObject = { items: list, sections: list, groups: list, members: list };
  let jobId: string;
  try {
    jobId = await world.start(workflow, input);
  } catch (error) {
    if (error instanceof ManagerError) return;
    throw error;
  }
  for (let round = 0; round < 50; round++) {
    const requests = world.take();
    if (!requests.length) break;
    for (const request of requests) await world.reply(request, { ...request.body, done: request.step });
  }
  const job = await world.job(jobId);
  expect(['running', 'completed', 'failed']).toContain(job.status);
}

interface Mutation {
  at: number;
  op: 'delete' | 'replace' | 'rename' | 'duplicate' | 'protoKey';
  value: Json;
  key: string;
}

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('delete', 'replace', 'rename', 'duplicate', 'protoKey'),
  value: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
  key: fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'depends', 'task', 'name', 'retries', 'timeout'),
    fc.string({ maxLength: 6 }),
  ),
});

/** Every (container, key) pair of a JSON value: where a mutation can apply. */
function slots(value: Json, found: { parent: JsonObject | Json[]; key: string | number }[] = []) {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      found.push({ parent: value, key: index });
      slots(item, found);
    });
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      found.push({ parent: value, key });
      slots(value[key] as Json, found);
    }
  }
  return found;
}

function setKey(target: JsonObject, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mutate(root: JsonObject, mutation: Mutation): void {
  const all = slots(root);
  const slot = all[mutation.at % Math.max(1, all.length)];
  if (!slot) return;
  const { parent, key } = slot;
  if (Array.isArray(parent)) {
    const index = key as number;
    if (mutation.op === 'delete') parent.splice(index, 1);
    else if (mutation.op === 'duplicate') parent.splice(index, 0, structuredClone(parent[index] as Json));
    else parent[index] = mutation.value;
    return;
  }
  const name = key as string;
  const current = parent[name] as Json;
  if (mutation.op === 'delete') delete parent[name];
  else if (mutation.op === 'replace') setKey(parent, name, mutation.value);
  else if (mutation.op === 'rename') {
    delete parent[name];
    setKey(parent, `${name}${mutation.key}`, current);
  } else if (mutation.op === 'protoKey') setKey(parent, mutation.key, mutation.value);
  else if (typeof current === 'string') setKey(parent, name, `${current}${current}`);
}
