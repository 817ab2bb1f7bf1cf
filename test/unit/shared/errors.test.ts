import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CommandError, UsageError } from '../../../local/cli/io.ts';
import { ConfigFileError } from '../../../local/config.ts';
import { ClaimCheckError, ClaimCheckRefusedError } from '../../../shared/adapters/s3-claim-check.ts';
import { SendFailedError } from '../../../shared/adapters/sqs-sender.ts';
import { TargetNotFoundError } from '../../../shared/client/connect.ts';
import { ConfigurationError } from '../../../shared/config.ts';
import {
  BadMessageError,
  CorrelationError,
  ExpressionError,
  FaninError,
  InvalidDefinitionError,
  isUnfixable,
  NoPartitionAvailableError,
  OutputChannelError,
  OutputTooLargeError,
} from '../../../shared/errors.ts';

/**
 * Every error fanin raises on purpose, built as its throwers build it, with the name, message and
 * retryable flag shared/errors.ts documents: false only for input that no retry can fix.
 */
const FAMILY: readonly { error: FaninError; name: string; message: string; retryable: boolean }[] = [
  { error: new FaninError('x'), name: 'FaninError', message: 'x', retryable: true },
  { error: new BadMessageError('bad body'), name: 'BadMessageError', message: 'bad body', retryable: false },
  {
    error: new InvalidDefinitionError(['name: required', 'completion: unknown']),
    name: 'InvalidDefinitionError',
    message: 'invalid aggregation definition: name: required; completion: unknown',
    retryable: false,
  },
  {
    error: new ExpressionError('$sum(x', 'unexpected end'),
    name: 'ExpressionError',
    message: 'expression "$sum(x" failed: unexpected end',
    retryable: false,
  },
  { error: new CorrelationError('no id'), name: 'CorrelationError', message: 'no id', retryable: false },
  {
    error: new ClaimCheckRefusedError('another bucket'),
    name: 'ClaimCheckRefusedError',
    message: 'another bucket',
    retryable: false,
  },
  {
    error: new ConfigFileError('fanin.config.ts: definitions: required'),
    name: 'ConfigFileError',
    message: 'fanin.config.ts: definitions: required',
    retryable: false,
  },
  {
    error: new TargetNotFoundError('no stack named fanin'),
    name: 'TargetNotFoundError',
    message: 'no stack named fanin',
    retryable: false,
  },
  {
    error: new UsageError('--timeout <seconds>'),
    name: 'UsageError',
    message: '--timeout <seconds>',
    retryable: false,
  },
  {
    error: new OutputTooLargeError('result/a-1', 300_000),
    name: 'OutputTooLargeError',
    message: 'output result/a-1 is 300000 bytes, more than SQS takes, and no payload bucket is configured',
    retryable: true,
  },
  {
    error: new OutputChannelError('events', ['queue']),
    name: 'OutputChannelError',
    message: 'output channel events failed (delivered: queue)',
    retryable: true,
  },
  {
    error: new NoPartitionAvailableError('replies', [{ index: 0, reason: 'send-disabled' }]),
    name: 'NoPartitionAvailableError',
    message: 'no partition of replies is available: #0 send-disabled',
    retryable: true,
  },
  {
    error: new ClaimCheckError('S3 refused'),
    name: 'ClaimCheckError',
    message: 'S3 refused',
    retryable: true,
  },
  {
    error: new SendFailedError('bank-a', 'throttled'),
    name: 'SendFailedError',
    message: 'sending to queue bank-a failed: throttled',
    retryable: true,
  },
  { error: new CommandError('timed out'), name: 'CommandError', message: 'timed out', retryable: true },
  // Thrown at cold start, before any message is handled: no message is to blame.
  {
    error: new ConfigurationError('FANIN_TABLE is not set'),
    name: 'ConfigurationError',
    message: 'FANIN_TABLE is not set',
    retryable: true,
  },
];

describe('the fanin error family', () => {
  it.each(FAMILY.map((e) => [e.name, e] as const))(
    '%s is a FaninError with its name, message and flag',
    (_, e) => {
      // Assess (mutant killed: a class back on `extends Error`, or bad input marked retryable)
      expect(e.error).toBeInstanceOf(FaninError);
      expect(e.error).toBeInstanceOf(Error);
      expect(e.error.name).toBe(e.name);
      expect(e.error.message).toBe(e.message);
      expect(e.error.retryable).toBe(e.retryable);
      expect(isUnfixable(e.error)).toBe(!e.retryable);
    },
  );

  it('keeps the fields its readers use, and the cause', () => {
    const cause = new Error('socket hang up');
    expect(new ExpressionError('$x', 'boom', { cause })).toMatchObject({ expression: '$x', cause });
    expect(new InvalidDefinitionError(['a'])).toMatchObject({ issues: ['a'] });
    expect(new OutputTooLargeError('o', 9)).toMatchObject({ outputId: 'o', bytes: 9 });
    expect(new OutputChannelError('queue', [], { cause })).toMatchObject({
      channel: 'queue',
      delivered: [],
      cause,
    });
    expect(new NoPartitionAvailableError('d', [])).toMatchObject({ destination: 'd', partitions: [] });
    expect(new SendFailedError('q', 'r')).toMatchObject({ queue: 'q' });
    expect(new CommandError('m', 3)).toMatchObject({ exitCode: 3 });
    expect(new BadMessageError('m', { cause }).cause).toBe(cause);
    // A FaninError's options are ErrorOptions plus the flag: the flag is not passed on to Error.
    expect(new FaninError('m', { retryable: false, cause })).toMatchObject({ retryable: false, cause });
  });

  it('treats anything outside the family as retryable', () => {
    expect(isUnfixable(new Error('ECONNRESET'))).toBe(false);
    expect(isUnfixable('a string')).toBe(false);
    expect(isUnfixable(undefined)).toBe(false);
  });

  /**
   * A new error class that does not join the family fails here. The exceptions are named with why
   * they stay outside it.
   */
  it('has every error class of shared/ and local/ (the runtime and the CLI) in it', () => {
    const OUTSIDE: Record<string, string> = {
      // The local emulators' retry of a taken port (local/ is the local runtime, not a bundle).
      PortTakenError: 'local/child-server.ts',
    };
    const root = join(import.meta.dirname, '../../..');
    const declared = [...sourcesUnder(join(root, 'shared')), ...sourcesUnder(join(root, 'local'))].flatMap(
      (file) =>
        [...readFileSync(file, 'utf8').matchAll(/class (\w+) extends (\w+)/g)]
          .filter(([, , base]) => base?.endsWith('Error'))
          .map(([, name]) => ({ name: name as string, file: relative(root, file) })),
    );
    const family = new Set(FAMILY.map((e) => e.name));
    const missing = declared.filter((d) => !family.has(d.name) && OUTSIDE[d.name] !== d.file);
    expect(missing).toEqual([]);
    // The scan found the family itself (it reads the right files).
    expect(declared.map((d) => d.name)).toEqual(expect.arrayContaining([...family]));
  });
});

/** The .ts files under `dir`, recursively. */
function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}
