import { describe, expect, it } from 'vitest';
import { routes } from '../../../functions/api/api-handler.js';
import { openApiDocument } from '../../../functions/api/openapi.js';

const document = openApiDocument() as { openapi: string; paths: Record<string, Record<string, unknown>> };
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const documented = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((key) => METHODS.includes(key))
    .map((method) => `${method.toUpperCase()} ${path}`),
);
const routed = routes.map((route) => `${route.method} ${route.path}`);

describe('The OpenAPI document', () => {
  it('is OpenAPI 3', () => {
    expect(document.openapi).toMatch(/^3\.\d+\.\d+$/);
  });

  it('describes every route of the router', () => {
    expect(routed.filter((route) => !documented.includes(route))).toEqual([]);
  });

  it('describes no route the router does not have', () => {
    expect(documented.filter((route) => !routed.includes(route))).toEqual([]);
  });

  it('declares every path parameter of each route', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const declared = Object.values(item)
        .flatMap((operation) => [
          ...(((item as { parameters?: { name: string; in: string }[] }).parameters ?? []) as {
            name: string;
            in: string;
          }[]),
          ...(((operation as { parameters?: { name: string; in: string }[] })?.parameters ?? []) as {
            name: string;
            in: string;
          }[]),
        ])
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name);
      for (const name of names) expect(declared, `${path} declares {${name}}`).toContain(name);
    }
  });

  it('lists, for every route, the 400 of a query parameter given more than once', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item).filter((key) => METHODS.includes(key))) {
        const responses = (item[method] as { responses: Record<string, { description: string }> }).responses;
        expect(responses[400]?.description, `${method.toUpperCase()} ${path}`).toMatch(
          /query parameter given more than once/,
        );
      }
    }
  });

  it('marks the routes that need no credentials as such', () => {
    const open = routes.filter((route) => !route.auth).map((route) => `${route.method} ${route.path}`);
    for (const route of open) {
      const [method, path] = route.split(' ') as [string, string];
      const operation = document.paths[path]?.[method.toLowerCase()] as { security?: unknown[] };
      expect(operation.security, route).toEqual([]);
    }
  });
});
