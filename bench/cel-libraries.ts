/**
 * Compares the two CEL libraries for ECMAScript we could build expressions on:
 * `@marcbachmann/cel-js` (the engine's choice) and `@bufbuild/cel` (a devDependency, kept to compare).
 *
 *   node --import tsx bench/cel-libraries.ts            conformance table, then speed table
 *   node --import tsx bench/cel-libraries.ts --quick    shorter timing runs
 *
 * (a) Conformance: the cel-spec conformance tests as `@bufbuild/cel-spec` ships them in JS form
 * (`testdata/conformance.js`, upstream cel-spec v0.25.1), suites that do not need protobuf messages.
 * A test that names a message type, a container, or expects a message or enum is left out for both
 * libraries ("n/a"). A test passes when the value equals the expected one (ints, uints and doubles
 * kept apart), or, when an error is expected, when the library reports one (at parse, check or run).
 *
 * (b) Speed on expressions like the ones workflows use, compile (parse + check / plan) and evaluate
 * measured apart. Self-contained: nothing here is imported by the engine.
 */
import {
  celEnv,
  celUint,
  isCelError,
  isCelList,
  isCelMap,
  isCelType,
  isCelUint,
  parse,
  plan,
} from '@bufbuild/cel';
import { tests as conformance } from '@bufbuild/cel-spec/testdata/conformance.js';
import { Environment } from '@marcbachmann/cel-js';
import { compileExpression, type ExpressionVariables } from '../engine/index.js';

const SUITES = [
  'basic',
  'comparisons',
  'logic',
  'macros',
  'fields',
  'integer_math',
  'fp_math',
  'string',
  'lists',
  'parse',
  'plumbing',
  'conversions',
];

// ---------------------------------------------------------------------------------------------------
// Conformance

/** The cel-spec `Value` message in its protobuf-JSON form (what conformance.js holds). */
interface ProtoValue {
  nullValue?: unknown;
  boolValue?: boolean;
  int64Value?: string;
  uint64Value?: string;
  doubleValue?: number | string;
  stringValue?: string;
  bytesValue?: string;
  listValue?: { values?: ProtoValue[] };
  mapValue?: { entries?: { key: ProtoValue; value: ProtoValue }[] };
  typeValue?: string;
  objectValue?: unknown;
  enumValue?: unknown;
}

interface Test {
  original: {
    name?: string;
    expr: string;
    value?: ProtoValue;
    evalError?: unknown;
    bindings?: Record<string, { value?: ProtoValue }>;
    container?: string;
    typeEnv?: unknown[];
    disableCheck?: boolean;
    checkOnly?: boolean;
    typedResult?: unknown;
  };
}
interface Suite {
  name: string;
  suites?: Suite[];
  tests?: Test[];
}

/** A value both libraries' results are reduced to before comparing: tagged, so 1, 1u and 1.0 differ. */
type Canon = string;

function canonExpected(v: ProtoValue): Canon {
  if ('nullValue' in v) return 'null';
  if (v.boolValue !== undefined) return `bool:${v.boolValue}`;
  if (v.int64Value !== undefined) return `int:${BigInt(v.int64Value)}`;
  if (v.uint64Value !== undefined) return `uint:${BigInt(v.uint64Value)}`;
  if (v.doubleValue !== undefined) return `double:${canonDouble(Number(v.doubleValue))}`;
  if (v.stringValue !== undefined) return `string:${JSON.stringify(v.stringValue)}`;
  if (v.bytesValue !== undefined) return `bytes:${Buffer.from(v.bytesValue, 'base64').toString('hex')}`;
  if (v.listValue) return `[${(v.listValue.values ?? []).map(canonExpected).join(',')}]`;
  if (v.mapValue) {
    return `{${(v.mapValue.entries ?? [])
      .map((e) => `${canonExpected(e.key)}=>${canonExpected(e.value)}`)
      .sort()
      .join(',')}}`;
  }
  if (v.typeValue !== undefined) return `type:${v.typeValue}`;
  // An empty Value is the proto3 default for a Value field: a 0 int/false/""... never in our suites.
  return `?${JSON.stringify(v)}`;
}

function canonDouble(n: number): string {
  return Object.is(n, -0) ? '0' : String(n);
}

function needsProto(t: Test): boolean {
  const o = t.original;
  const text = JSON.stringify(o);
  return (
    o.container !== undefined ||
    o.checkOnly === true ||
    /TestAllTypes|NestedTestAllTypes|google\.protobuf|cel\.expr\./.test(text) ||
    /"objectValue"|"enumValue"/.test(text)
  );
}

interface Library {
  name: string;
  /** Throws or returns { error } for an error; else the canonical value. */
  run(t: Test): { value: Canon } | { error: string };
}

// --- @marcbachmann/cel-js ---------------------------------------------------------------------------

const celJsEnv = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false });
/** cel-js does not export its uint class: take it from a uint value. */
const UnsignedInt = (celJsEnv.evaluate('1u') as object).constructor as new (value: bigint) => object;

function celJsInput(v: ProtoValue): unknown {
  if ('nullValue' in v) return null;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.int64Value !== undefined) return BigInt(v.int64Value);
  if (v.uint64Value !== undefined) return new UnsignedInt(BigInt(v.uint64Value));
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.bytesValue !== undefined) return new Uint8Array(Buffer.from(v.bytesValue, 'base64'));
  if (v.listValue) return (v.listValue.values ?? []).map(celJsInput);
  if (v.mapValue)
    return new Map((v.mapValue.entries ?? []).map((e) => [celJsInput(e.key), celJsInput(e.value)]));
  throw new Error(`binding not supported: ${JSON.stringify(v)}`);
}

function celJsCanon(v: unknown): Canon {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return `bool:${v}`;
  if (typeof v === 'bigint') return `int:${v}`;
  if (v instanceof UnsignedInt) return `uint:${v.valueOf()}`;
  if (typeof v === 'number') return `double:${canonDouble(v)}`;
  if (typeof v === 'string') return `string:${JSON.stringify(v)}`;
  if (v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString('hex')}`;
  if (Array.isArray(v)) return `[${v.map(celJsCanon).join(',')}]`;
  if (v instanceof Map) {
    return `{${[...v]
      .map(([k, x]) => `${celJsCanon(k)}=>${celJsCanon(x)}`)
      .sort()
      .join(',')}}`;
  }
  if (v !== null && typeof v === 'object' && v.constructor?.name === 'Type') {
    const name = String(v).replace(/^Type<(.*)>$/, '$1');
    return `type:${name === 'null' ? 'null_type' : name}`;
  }
  if (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) {
    // cel-js builds map literals as plain objects: their keys come back as strings.
    return `{${Object.entries(v)
      .map(([k, x]) => `string:${JSON.stringify(k)}=>${celJsCanon(x)}`)
      .sort()
      .join(',')}}`;
  }
  return `?${String(v)}`;
}

const celJs: Library = {
  name: '@marcbachmann/cel-js 8',
  run(t) {
    const o = t.original;
    const bindings: Record<string, unknown> = {};
    for (const [k, b] of Object.entries(o.bindings ?? {})) if (b.value) bindings[k] = celJsInput(b.value);
    try {
      const program = celJsEnv.parse(o.expr);
      if (!o.disableCheck) {
        const checked = program.check();
        if (!checked.valid && Object.keys(bindings).length === 0)
          return { error: String(checked.error?.message) };
      }
      return { value: celJsCanon(program(bindings)) };
    } catch (error) {
      return { error: String((error as Error).message) };
    }
  },
};

// --- @bufbuild/cel ----------------------------------------------------------------------------------

const bufEnv = celEnv();

function bufInput(v: ProtoValue): unknown {
  if (v.uint64Value !== undefined) return celUint(BigInt(v.uint64Value));
  if (v.listValue) return (v.listValue.values ?? []).map(bufInput);
  if (v.mapValue) return new Map((v.mapValue.entries ?? []).map((e) => [bufInput(e.key), bufInput(e.value)]));
  return celJsInput(v);
}

function bufCanon(v: unknown): Canon {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return `bool:${v}`;
  if (typeof v === 'bigint') return `int:${v}`;
  if (isCelUint(v)) return `uint:${v.value}`;
  if (typeof v === 'number') return `double:${canonDouble(v)}`;
  if (typeof v === 'string') return `string:${JSON.stringify(v)}`;
  if (v instanceof Uint8Array) return `bytes:${Buffer.from(v).toString('hex')}`;
  if (isCelList(v)) return `[${[...v].map(bufCanon).join(',')}]`;
  if (isCelMap(v)) {
    return `{${[...v]
      .map(([k, x]) => `${bufCanon(k)}=>${bufCanon(x)}`)
      .sort()
      .join(',')}}`;
  }
  if (isCelType(v)) return `type:${v.name}`;
  return `?${String(v)}`;
}

const buf: Library = {
  name: '@bufbuild/cel 0.6',
  run(t) {
    const o = t.original;
    const bindings: Record<string, unknown> = {};
    for (const [k, b] of Object.entries(o.bindings ?? {})) if (b.value) bindings[k] = bufInput(b.value);
    try {
      const program = plan(bufEnv, parse(o.expr));
      const value = program(bindings as Parameters<typeof program>[0]);
      if (isCelError(value)) return { error: value.message };
      return { value: bufCanon(value) };
    } catch (error) {
      return { error: String((error as Error).message) };
    }
  },
};

// --- running ----------------------------------------------------------------------------------------

function flatten(suite: Suite): Test[] {
  return [...(suite.tests ?? []), ...(suite.suites ?? []).flatMap(flatten)];
}

interface Tally {
  pass: number;
  fail: number;
  failures: string[];
}

function runConformance(libraries: Library[]): void {
  const root = conformance as unknown as Suite;
  const rows: string[][] = [];
  const totals = libraries.map(() => ({ pass: 0, fail: 0 }));
  let totalTests = 0;
  let totalSkipped = 0;
  const failuresByLibrary = libraries.map(() => [] as string[]);
  for (const name of SUITES) {
    const suite = root.suites?.find((s) => s.name === name);
    if (!suite) throw new Error(`no suite ${name} in @bufbuild/cel-spec`);
    const all = flatten(suite);
    const tests = all.filter((t) => !needsProto(t) && (t.original.value || t.original.evalError));
    const skipped = all.length - tests.length;
    const tallies: Tally[] = libraries.map((library, i) => {
      const tally: Tally = { pass: 0, fail: 0, failures: [] };
      for (const t of tests) {
        const expected = t.original.value ? canonExpected(t.original.value) : undefined;
        let outcome: { value: Canon } | { error: string };
        try {
          outcome = library.run(t);
        } catch (error) {
          outcome = { error: String(error) };
        }
        const ok =
          expected === undefined ? 'error' in outcome : 'value' in outcome && outcome.value === expected;
        if (ok) tally.pass++;
        else {
          tally.fail++;
          const got = 'value' in outcome ? outcome.value : `error ${outcome.error.split('\n')[0]}`;
          tally.failures.push(`${name}: ${t.original.expr}  expected ${expected ?? 'an error'}, got ${got}`);
        }
      }
      const total = totals[i] as { pass: number; fail: number };
      total.pass += tally.pass;
      total.fail += tally.fail;
      (failuresByLibrary[i] as string[]).push(...tally.failures);
      return tally;
    });
    totalTests += tests.length;
    totalSkipped += skipped;
    rows.push([name, String(tests.length), String(skipped), ...tallies.map((t) => `${t.pass} / ${t.fail}`)]);
  }
  rows.push([
    'total',
    String(totalTests),
    String(totalSkipped),
    ...totals.map((t) => `${t.pass} / ${t.fail} (${((100 * t.pass) / totalTests).toFixed(1)} %)`),
  ]);
  console.log('\nCEL conformance (cel-spec v0.25.1 via @bufbuild/cel-spec), pass / fail per suite\n');
  printTable(['suite', 'tests', 'n/a (proto)', ...libraries.map((l) => l.name)], rows);
  if (process.argv.includes('--failures')) {
    libraries.forEach((library, i) => {
      console.log(`\nfailures of ${library.name}:`);
      for (const f of failuresByLibrary[i] ?? []) console.log(`  ${f}`);
    });
  } else {
    console.log('\n(--failures lists each failing test)');
  }
}

// ---------------------------------------------------------------------------------------------------
// Speed

const EXPRESSIONS = [
  'input.total > 100',
  'has(input.error)',
  '!(input.total > 100)',
  '{"orderId": steps["load-order"].orderId, "total": input.total}',
  'input.items.exists(i, i.sku == "b" && i.qty > 1.0)',
];

const VARIABLES: ExpressionVariables = {
  input: {
    total: 150.5,
    items: [
      { sku: 'a', qty: 1 },
      { sku: 'b', qty: 2 },
      { sku: 'c', qty: 3 },
    ],
  },
  job: { id: 'j-1', workflow: 'orders', version: 1, input: { orderId: 'o-1' } },
  steps: { 'load-order': { orderId: 'o-1' } },
};

const quick = process.argv.includes('--quick');

/** Operations per second of `fn`, best of a few timed rounds after a warm-up. */
function opsPerSecond(fn: (i: number) => unknown, minMs = quick ? 100 : 400): number {
  let sink: unknown;
  for (let i = 0; i < 2_000; i++) sink = fn(i);
  let best = 0;
  for (let round = 0; round < 3; round++) {
    let n = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < minMs) {
      for (let i = 0; i < 1_000; i++) sink = fn(n++);
      elapsed = performance.now() - start;
    }
    best = Math.max(best, n / (elapsed / 1000));
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return best;
}

function formatRate(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M/s`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)} k/s`;
  return `${n.toFixed(0)} /s`;
}

function runSpeed(): void {
  const celJsCompiled = new Environment({ homogeneousAggregateLiterals: false });
  for (const name of ['input', 'job', 'steps', 'parent']) celJsCompiled.registerVariable(name, 'map');
  const rows: string[][] = [];
  for (const source of EXPRESSIONS) {
    // Compile: a fresh source text each time (a trailing comment-free space), so no cache can help.
    const celJsCompile = opsPerSecond((i) => {
      const p = celJsCompiled.parse(i % 2 ? source : `${source} `);
      return p.check();
    });
    const bufCompile = opsPerSecond((i) => plan(bufEnv, parse(i % 2 ? source : `${source} `)));
    const kind = source.startsWith('{') ? 'map' : 'bool';
    const oursCompile = opsPerSecond((i) => {
      const result = compileExpression(i % 2 ? source : `${source} `, kind);
      if (!result.ok) throw new Error(`${source}: ${result.error}`);
      return result;
    });

    const celJsProgram = celJsCompiled.parse(source);
    celJsProgram.check();
    const celJsEval = opsPerSecond(() => celJsProgram(VARIABLES as unknown as Record<string, unknown>));
    const bufProgram = plan(bufEnv, parse(source));
    const bufEval = opsPerSecond(() => bufProgram(VARIABLES as unknown as Parameters<typeof bufProgram>[0]));
    const ours = compileExpression(source, kind);
    if (!ours.ok) throw new Error(`${source}: ${ours.error}`);
    const oursEval = opsPerSecond(() => ours.expression.evaluate(VARIABLES));
    rows.push([
      source,
      formatRate(celJsCompile),
      formatRate(bufCompile),
      formatRate(oursCompile),
      formatRate(celJsEval),
      formatRate(bufEval),
      formatRate(oursEval),
    ]);
  }
  console.log(`\nSpeed (Node ${process.version}), operations per second, best of 3 rounds\n`);
  printTable(
    [
      'expression',
      'compile cel-js',
      'compile bufbuild',
      'compile ours',
      'eval cel-js',
      'eval bufbuild',
      'eval ours (cel-js + limits + JSON out)',
    ],
    rows,
  );
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(line(header));
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of rows) console.log(line(r));
}

if (!process.argv.includes('--speed-only')) runConformance([celJs, buf]);
if (!process.argv.includes('--conformance-only')) runSpeed();
