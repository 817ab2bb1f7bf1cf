import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { powertoolsLog } from '../../../shared/app.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Logs carry ids, counts and reasons, never a payload: a secret in bodies and attributes of good
 * and bad messages must not appear in anything fanin writes to its log, at any level.
 */
describe('logging', () => {
  let fanin: FaninUnderTest;
  const SECRET = 'SECRET-4711-do-not-log';

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ]);
  });
  afterAll(() => fanin.stop());

  it('a run with good and bad messages logs what happened and no body, payload or attribute value', async () => {
    // Prepare: Powertools Logger writing JSON lines to stdout and stderr, captured
    const lines: string[] = [];
    const capture = (chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    };
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation(capture),
      vi.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
    fanin.buildContext({ log: powertoolsLog(new Logger({ serviceName: 'fanin', logLevel: 'DEBUG' })) });
    try {
      // Act
      await fanin.sendRequest({ definition: 'plain', aggregateId: 'log-1', expected: 1, note: SECRET });
      await fanin.drain();
      await fanin.sendReply(
        { secret: SECRET },
        { 'fanin-aggregate-id': 'log-1', 'fanin-reply-id': '0', 'x-secret': SECRET },
      );
      await fanin.sendReply(`not json ${SECRET}`, { 'fanin-aggregate-id': 'log-1', 'fanin-reply-id': '1' });
      await fanin.sendRequest(`{"definition": "${SECRET}"}`);
      await fanin.drain();
    } finally {
      for (const spy of spies) spy.mockRestore();
      fanin.buildContext();
    }

    // Assess
    const log = lines.join('');
    expect(log).toContain('"message":"aggregate closed"');
    expect(log).toContain('"message":"message routed to the error output"');
    expect(log).toContain('body is not valid JSON');
    expect(log).not.toContain(SECRET);
    expect(await fanin.outputs('completed')).toHaveLength(1);
    // the error output keeps the original message: nothing is lost by not logging it
    const errors = await fanin.outputs('error');
    expect(JSON.stringify(errors)).toContain(SECRET);
  });
});
