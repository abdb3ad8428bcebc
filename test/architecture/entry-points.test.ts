import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../support/source-imports.js';

// The entry points choose adapters and hand them on as ports: they never ask which adapter they have.
const ROOT = resolve(import.meta.dirname, '../..');

/** Every class an adapter folder exports. */
function adapterClasses(): Set<string> {
  const classes = sourceFiles(join(ROOT, 'functions/adapters')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/export\s+(?:abstract\s+)?class\s+(\w+)/g)].map(
      (m) => m[1] as string,
    ),
  );
  return new Set(classes);
}

/** The adapter classes `source` tests a value against with `instanceof`. */
function instanceofAdapters(source: string, classes: ReadonlySet<string>): string[] {
  return [...source.matchAll(/\binstanceof\s+(\w+)/g)]
    .map((m) => m[1] as string)
    .filter((name) => classes.has(name));
}

describe('the entry points', () => {
  const classes = adapterClasses();

  it('functions/local/serve.ts tells no adapter from another with instanceof', () => {
    const serve = readFileSync(join(ROOT, 'functions/local/serve.ts'), 'utf8');
    expect(instanceofAdapters(serve, classes)).toEqual([]);
  });

  it('sees an instanceof on an adapter class (the check itself works)', () => {
    expect(classes).toContain('RabbitMqBus');
    expect(classes).toContain('MemoryBus');
    const telling = 'const max = bus instanceof RabbitMqBus ? bus.maxDeliveries : undefined;';
    expect(instanceofAdapters(telling, classes)).toEqual(['RabbitMqBus']);
    expect(instanceofAdapters('if (error instanceof Error) throw error;', classes)).toEqual([]);
  });
});
