import { describe, expect, it } from 'vitest';
import {
  identifierProblem,
  jsonDepth,
  MAX_REASON_LENGTH,
  MAX_REQUEST_ID_LENGTH,
} from '../../../../shared/engine/limits.ts';
import type { RawMessage } from '../../../../shared/ports.ts';
import { routeError } from '../../../../shared/use-cases/error-output.ts';
import { handleRequest } from '../../../../shared/use-cases/fan-out.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from './factories.ts';

/**
 * Every field fanin takes from a message has a bound (shared/engine/limits.ts, listed in
 * docs/wire-contract.md): beyond it the message is bad input, refused to the error output with
 * the reason, and nothing is opened or sent. And the error output itself always fits SQS.
 */

/** SQS's largest message. */
const SQS_MAX_BYTES = 262_144;

const PLAIN = aDefinition({ name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' } });
const LABELLED = aDefinition({
  name: 'labelled',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'worker', labelPath: '$.name' },
  completion: { strategy: 'all' },
});

/** A request as the ingress queue delivers it. */
function aRequest(body: unknown, attributes: Record<string, string> = {}): RawMessage {
  return { messageId: `m-${Math.random()}`, body: JSON.stringify(body), attributes, receiveCount: 1 };
}

describe('the bounds of a request', () => {
  it.each([
    [
      '257 characters long',
      'r'.repeat(MAX_REQUEST_ID_LENGTH + 1),
      'requestId is 257 characters, more than the 256 allowed',
    ],
    ['holding a control character', 'r-\u0000-digest', 'requestId contains control characters'],
  ])(
    'a request whose requestId is %s is refused to the error output and opens nothing',
    async (_, requestId, reason) => {
      // Prepare
      const { ctx, ports } = memoryContext([PLAIN]);

      // Act
      await handleRequest(
        ctx,
        aRequest({ definition: 'plain', aggregateId: 'rid-1', requestId, expected: 1 }),
      );

      // Assess (mutants killed: no bound on the request id; control characters let through, so a
      // request id could pose as another's identity with its digest)
      expect(ports.outputs.to('error').map((e) => e.reason)).toEqual([reason]);
      expect(await ports.store.getHeader('rid-1')).toBeUndefined();
    },
  );

  it('a request id of exactly 256 characters opens its aggregate', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([PLAIN]);

    // Act
    await handleRequest(
      ctx,
      aRequest({ definition: 'plain', aggregateId: 'rid-2', requestId: 'r'.repeat(256), expected: 1 }),
    );

    // Assess
    expect(ports.outputs.to('error')).toEqual([]);
    expect(await ports.store.getHeader('rid-2')).toMatchObject({ status: 'open' });
  });

  it('a splitter item whose label is over 256 characters refuses the whole request; nothing is sent', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([LABELLED]);
    const items = [{ name: 'ok' }, { name: 'l'.repeat(257) }];

    // Act
    await handleRequest(ctx, aRequest({ definition: 'labelled', aggregateId: 'label-1', items }));

    // Assess (mutant killed: labels unbounded)
    expect(ports.outputs.to('error').map((e) => e.reason)).toEqual([
      "$.items[1]'s label ($.name) is 257 characters, more than the 256 allowed",
    ]);
    expect(ports.sender.sent).toEqual([]);
    expect(await ports.store.getHeader('label-1')).toBeUndefined();
  });

  it('an unknown definition name of 100,000 characters is refused without quoting it', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([PLAIN]);

    // Act
    await handleRequest(ctx, aRequest({ definition: 'd'.repeat(100_000), expected: 1 }));

    // Assess
    expect(ports.outputs.to('error').map((e) => e.reason)).toEqual([
      "definition name is 100000 characters, more than the 64 a definition's name has",
    ]);
  });
});

describe('the error output', () => {
  it('without a payload bucket, a bad message of 200 KB of quotes is cut so that its error output fits SQS', async () => {
    // Prepare: every quote doubles when the output carries the body as JSON
    const { ctx, ports } = memoryContext([PLAIN]);
    const message: RawMessage = {
      messageId: 'm-quotes',
      body: '"'.repeat(200_000),
      attributes: {},
      receiveCount: 1,
    };

    // Act
    await routeError(ctx, 'ingress', message, 'body is not valid JSON');

    // Assess (mutant killed: the body cut by its raw size, not as the output carries it)
    const [output] = ports.outputs.to('error');
    expect(Buffer.byteLength(JSON.stringify(output))).toBeLessThanOrEqual(SQS_MAX_BYTES);
    expect(output?.message).toMatchObject({ truncated: true, bytes: 200_000 });
  });

  it('a reason quoting a huge value is cut to its bound', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([PLAIN]);
    const message: RawMessage = { messageId: 'm-reason', body: '{}', attributes: {}, receiveCount: 1 };

    // Act
    await routeError(ctx, 'ingress', message, `unknown definition "${'x'.repeat(300_000)}"`);

    // Assess (mutant killed: reasons unbounded)
    const [output] = ports.outputs.to('error');
    expect(String(output?.reason)).toHaveLength(MAX_REASON_LENGTH + 1);
  });
});

describe('identifierProblem', () => {
  it.each([
    ['', 'is empty'],
    ['abc', undefined],
    ['a\tb', 'contains control characters'],
    ['a\u007fb', 'contains control characters'],
    // A C1 control character (NEL) is a control character too.
    ['a\u0085b', 'contains control characters'],
    ['a\u009fb', 'contains control characters'],
    ['a\u00a0b', undefined],
    ['x'.repeat(11), 'is 11 characters, more than the 10 allowed'],
  ])('says what is wrong with %j', (value, problem) => {
    expect(identifierProblem(value, 10)).toBe(problem);
  });
});

describe('jsonDepth', () => {
  it.each([
    ['1', 0],
    ['[]', 1],
    ['{"a":[{"b":[]}]}', 4],
    ['["[[[{{"]', 1],
    ['["\\"[[["]', 1],
    ['["\\\\",[[]]]', 3],
  ])('reads the depth of %s from its text, brackets inside strings and escapes included', (text, depth) => {
    // Assess (mutant killed: an escaped quote read as the end of its string)
    expect(jsonDepth(text)).toBe(depth);
    expect(jsonDepth(text)).toBe(depthOf(JSON.parse(text)));
  });
});

/** The depth of a parsed value, to check {@link jsonDepth} against. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}
