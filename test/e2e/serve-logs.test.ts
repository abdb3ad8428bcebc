import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../support/cli-process.js';
import { AMQP_URL, eventually, uniqueName } from '../support/rabbitmq.js';

const execFileAsync = promisify(execFile);
const BIN = join(import.meta.dirname, '../../bin/switchyard.js');
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/** `switchyard serve <args>` in a pseudo-terminal for `seconds`, then Ctrl-C (SIGINT); all it wrote. */
async function serveInTerminal(args: string[], seconds = 3): Promise<string> {
  const command = [
    'timeout',
    '--preserve-status',
    '-s',
    'INT',
    String(seconds),
    process.execPath,
    BIN,
    'serve',
    ...args,
  ]
    .map(quote)
    .join(' ');
  const { stdout } = await execFileAsync('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, TERM: 'xterm', NO_COLOR: '1', LOG_LEVEL: 'info' },
    timeout: 30_000,
  });
  return stdout.replace(/\r/g, '');
}

const CONFIG = join(import.meta.dirname, '../../examples/word-counts/workflows.yaml');

describe('serve: what it prints', { timeout: 60_000 }, () => {
  it('on a terminal: one start-up line with the dashboard URL, then readable log lines', async () => {
    const output = await serveInTerminal([
      '--bus',
      'memory',
      '--db',
      ':memory:',
      '--port',
      '0',
      '--config',
      CONFIG,
    ]);
    const lines = output.trimEnd().split('\n');
    expect(lines.filter((line) => line.includes('switchyard serving'))).toEqual([
      expect.stringMatching(
        /^switchyard serving http:\/\/127\.0\.0\.1:\d+\/ \(dashboard and API\) · SQLite :memory: · in-memory bus · workflows: book-word-counts · Ctrl-C stops it$/,
      ),
    ]);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\d\d:\d\d:\d\d INFO {2}workflow registered {2}workflow=book-word-counts version=1$/,
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^\d\d:\d\d:\d\d INFO {2}stopping {2}signal=SIGINT$/));
    expect(lines.some((line) => line.startsWith('{'))).toBe(false);
  });

  it('on a terminal with --log-format json, and without a terminal: JSON lines', async () => {
    const output = await serveInTerminal([
      '--bus',
      'memory',
      '--db',
      ':memory:',
      '--port',
      '0',
      '--log-format',
      'json',
    ]);
    const lines = output.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.map((line) => JSON.parse(line).message)).toContain('serving');

    const piped = spawnCli(['serve', '--bus', 'memory', '--db', ':memory:', '--port', '0'], {
      LOG_LEVEL: 'info',
    });
    try {
      await eventually('the serving line', () => piped.output().includes('"message":"serving"'), 20_000);
      expect(piped.output()).not.toContain('switchyard serving');
    } finally {
      await piped.stop('SIGINT');
    }
  });

  it('a wrong --log-format is refused in one line', async () => {
    const run = await runCli([
      'serve',
      '--bus',
      'memory',
      '--db',
      ':memory:',
      '--port',
      '0',
      '--log-format',
      'xml',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('switchyard: --log-format must be pretty or json, got "xml"\n');
  });
});

describe('serve: the common AMQP failures, in plain words', { timeout: 60_000 }, () => {
  it('a refused connection says what to check, once per outage', async () => {
    const serve = spawnCli(
      ['serve', '--db', ':memory:', '--port', '0', '--amqp', 'amqp://guest:guest@127.0.0.1:1'],
      {
        LOG_LEVEL: 'info',
      },
    );
    try {
      await eventually('six attempts', () => serve.output().split('cannot connect').length > 6, 20_000);
      const output = serve.output();
      expect(output).toContain(
        'nothing listens there: is RabbitMQ running (rabbitmq-server -detached)? Are the host and port in --amqp or AMQP_URL right? To try switchyard without a broker: serve --bus memory',
      );
      // Once per connection's outage (the publisher's, the reply consumer's), not on every retry.
      const tries = output.split('cannot connect').length - 1;
      const hints = output.split('nothing listens there').length - 1;
      expect(hints).toBeLessThanOrEqual(3);
      expect(hints).toBeLessThan(tries / 2);
    } finally {
      await serve.stop('SIGINT');
    }
  });

  it('a wrong vhost names it and the commands that check it', async () => {
    const vhost = uniqueName('novhost');
    const url = `${AMQP_URL.replace(/\/$/, '')}/${vhost}`;
    const run = await runCli(['serve', '--db', ':memory:', '--port', '0', '--amqp', url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`switchyard: RabbitMQ refused the vhost "${vhost}"`);
    expect(run.stderr).toContain(
      `check with "rabbitmqctl list_vhosts" and "rabbitmqctl list_permissions -p ${vhost}"`,
    );
  });

  it('a wrong password names the user and where the URL comes from, and never the password', async () => {
    const url = AMQP_URL.replace('guest:guest', 'guest:s3cret-wrong');
    const run = await runCli(['serve', '--db', ':memory:', '--port', '0', '--amqp', url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'refused the login of user "guest" (403 ACCESS_REFUSED): check the user name and password in --amqp, AMQP_URL or AMQP_SERVER',
    );
    expect(run.stdout + run.stderr).not.toContain('s3cret-wrong');
  });
});
