import { describe, expect, it, vi } from 'vitest';
import {
  addLambdaContext,
  functionLogger,
  newExecutionEnvironment,
} from '../../../../shared/observability/logger.ts';

/**
 * The handlers' one logger (docs/observability.md, "Logs"): every line of an invocation carries its
 * Lambda context (`function_request_id`, `function_name`, `cold_start`…); without one (the local
 * runtime, tests) nothing is added.
 */
const CONTEXT = {
  awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  functionName: 'Fanin-FaninReply',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:Fanin-FaninReply',
  memoryLimitInMB: '512',
  callbackWaitsForEmptyEventLoop: true,
  logGroupName: '/aws/lambda/Fanin-FaninReply',
  logStreamName: 's',
  getRemainingTimeInMillis: () => 1000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

describe('the function logger', () => {
  it('is one logger per execution environment', () => {
    expect(functionLogger()).toBe(functionLogger());
  });

  it('is a new logger in a new execution environment, then the one logger of that environment', () => {
    const before = functionLogger();
    newExecutionEnvironment();
    const after = functionLogger();
    expect(after).not.toBe(before);
    expect(functionLogger()).toBe(after);
  });

  it("adds a Lambda invocation's context to the lines it writes", () => {
    const logger = functionLogger();
    const add = vi.spyOn(logger, 'addContext');
    addLambdaContext(logger, CONTEXT);
    expect(add).toHaveBeenCalledWith(CONTEXT);
    add.mockRestore();
  });

  it.each([
    ['no context', undefined],
    ['null', null],
    ['a context without a request id', { functionName: 'f' }],
    ['a context without a function name', { awsRequestId: 'r' }],
    ['text', 'context'],
  ])('adds nothing for %s', (_, invocation) => {
    const logger = functionLogger();
    const add = vi.spyOn(logger, 'addContext');
    addLambdaContext(logger, invocation);
    expect(add).not.toHaveBeenCalled();
    add.mockRestore();
  });

  it('writes lines with the function context once added', () => {
    const logger = functionLogger();
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      addLambdaContext(logger, CONTEXT);
      logger.info('reply recorded');
    } finally {
      write.mockRestore();
    }
    const line = lines.map((l) => l.trim()).find((l) => l.includes('reply recorded'));
    expect(line).toBeDefined();
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      function_request_id: CONTEXT.awsRequestId,
      function_name: CONTEXT.functionName,
    });
  });
});
