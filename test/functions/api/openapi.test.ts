import { describe, expect, it } from 'vitest';
import { definitionInNamespace } from '../../../engine/index.js';
import { routes } from '../../../functions/api/api-handler.js';
import { namespacedTemplate, templateNames } from '../../../functions/api/openapi.js';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import {
  document,
  type OperationObject,
  operations,
  queryValue,
  undocumented,
  validAgainst,
} from '../../support/openapi-conformance.js';
import { SimulatedWorld, workflowsFrom } from '../../support/simulated-world.js';

const documented = operations().map(({ method, path }) => `${method} ${path}`);
const routed = routes.flatMap((route) => [
  `${route.method} ${route.path}`,
  ...(route.auth && route.namespaced ? [`${route.method} ${namespacedTemplate(route.path)}`] : []),
]);

describe('The OpenAPI document', () => {
  it('is OpenAPI 3.1', () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
  });

  it('describes every route of the router, and each namespaced one beneath /api/ns/{namespace}', () => {
    expect(routed.filter((route) => !documented.includes(route))).toEqual([]);
  });

  it('describes no route the router does not have', () => {
    expect(documented.filter((route) => !routed.includes(route))).toEqual([]);
  });

  it("declares every path parameter of each route, and exactly the route's query parameters", () => {
    for (const { method, path, operation } of operations()) {
      const declared = (where: string) =>
        (operation.parameters ?? []).filter((parameter) => parameter.in === where).map(({ name }) => name);
      expect(declared('path').sort(), `${method} ${path}`).toEqual(templateNames(path).sort());
      const route = routes.find(
        (candidate) =>
          candidate.method === method &&
          (candidate.path === path || namespacedTemplate(candidate.path) === path),
      );
      expect(declared('query').sort(), `${method} ${path}`).toEqual(Object.keys(route?.query ?? {}).sort());
    }
  });

  it('lists, for every route, the 400 of a query parameter given more than once', () => {
    for (const { method, path, operation } of operations()) {
      expect(operation.responses[400]?.description, `${method} ${path}`).toMatch(
        /query parameter given more than once/,
      );
    }
  });

  it('marks the routes that need no credentials as such, and lists 401, 403 and 503 for the others', () => {
    for (const { method, path, operation } of operations()) {
      const route = routes.find((candidate) => candidate.method === method && candidate.path === path);
      if (route && !route.auth) expect(operation.security, `${method} ${path}`).toEqual([]);
      else
        expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(
          expect.arrayContaining(['401', '403', '503']),
        );
    }
  });

  it('names a component for every schema it refers to', () => {
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)];
    for (const [, name] of refs) expect(Object.keys(document.components.schemas)).toContain(name);
  });
});

const JOB = '0b7c2d9e-9f0a-4a51-9b7e-0c1d2e3f4a5b';
const WORKFLOWS = `workflows:
  - name: billing
    steps:
      - name: charge
      - name: approve
        type: signal
`;

/** Values tried in every parameter: names, ids, numbers, encodings, lookalikes, control characters. */
const CANDIDATES = [
  'billing',
  'Billing_2-x',
  'a/b',
  'team-b/billing',
  '..',
  '.',
  '%2F',
  'team-b\uff0fbilling',
  'team-b\u2215billing',
  '9lives',
  'a b',
  '\u0001',
  'x'.repeat(300),
  'a'.repeat(65),
  '0',
  '1',
  '12',
  '-1',
  '5000',
  '1.5',
  '1e2',
  '0x10',
  ' 7',
  'running',
  'all',
  'true',
  'yes',
  'maybe',
  JOB,
  JOB.toUpperCase(),
  '0123456789abcdef',
  '2026-03-01T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '',
];

/** A valid value of each parameter, to fill in the ones not being tried. */
function validValue(path: string, name: string, job: string): string {
  if (name === 'id') return path.startsWith('/api/tokens') ? '0123456789abcdef' : job;
  const values: Record<string, string> = {
    name: 'billing',
    namespace: 'team-a',
    step: path.includes('/signal/') ? 'approve' : 'charge',
    'file+': 'app.js',
  };
  return values[name] ?? 'x';
}

/** Whether a documented parameter accepts a value, by the document's schema read with Ajv. */
function documentedAccepts(
  parameter: NonNullable<OperationObject['parameters']>[number],
  text: string,
): boolean {
  const value = parameter.in === 'query' ? queryValue(parameter.schema, text) : text;
  return validAgainst(parameter.schema, value).valid;
}

describe('The OpenAPI document: every documented rule is the enforced one', () => {
  for (const { method, path, operation } of operations()) {
    const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in !== 'header');
    if (!parameters.length) continue;
    it(`${method} ${path}: each parameter refuses (400, naming it) exactly what its schema refuses`, async () => {
      for (const parameter of parameters) {
        for (const candidate of CANDIDATES) {
          // An empty path segment is no segment; an empty query value that may be empty is no value.
          if (candidate === '' && (parameter.in === 'path' || parameter.allowEmptyValue)) continue;
          // Prepare: a fresh world, every other parameter valid
          const world = new SimulatedWorld();
          await world.register(WORKFLOWS);
          await world.manager.registerWorkflow(definitionInNamespace(workflowsFrom(WORKFLOWS)[0]!, 'team-a'));
          const job = await world.start('billing', {});
          const aborted = AbortSignal.abort();
          const deps = worldApi(world, { maxBodyBytes: 64 * 1024, shutdown: aborted, waitPollMs: 1 });
          const value = (name: string) => (name === parameter.name ? candidate : validValue(path, name, job));
          const concrete = path.replace(/\{([^}]+)\}/g, (_, name: string) =>
            name.endsWith('+') ? value(name) : encodeURIComponent(value(name)),
          );
          const query: Record<string, string> = {};
          for (const other of parameters.filter((p) => p.in === 'query' && (p.required || p === parameter))) {
            query[other.name] = value(other.name);
          }
          // Act
          const response = await callApi(deps, { method, path: concrete, query, body: '{}' });
          // Assess
          const refused =
            response.status === 400 &&
            errorOf(response).message.includes(`parameter "${parameter.name.replace(/\+$/, '')}"`);
          const accepts = documentedAccepts(parameter, candidate);
          expect(
            { refused, status: response.status },
            `${parameter.in} ${parameter.name}=${JSON.stringify(candidate)}: documented ${accepts ? 'valid' : 'invalid'}; answered ${response.body.slice(0, 200)}`,
          ).toMatchObject({ refused: !accepts });
          expect(
            undocumented(method, concrete, response),
            `${parameter.name}=${JSON.stringify(candidate)}`,
          ).toBeUndefined();
        }
      }
    }, 120_000);
  }
});
