import { ConditionalCheckFailedException, DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { SQSServiceException } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { sdkError, unmodelled, validation } from '../../../../sim/models/errors.ts';

/**
 * The models' errors are what the SDK would have thrown: instances of the service's exception
 * classes (the adapters test `instanceof`), with name, message, fault and metadata. The
 * conformance test compares names and messages with the emulators; this pins the shape.
 */

describe('model errors', () => {
  it('are instances of the SDK class, with its fields and a 400 by default', () => {
    const error = sdkError(ConditionalCheckFailedException, 'The conditional request failed', {
      Item: { a: 1 },
    });
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(error).toBeInstanceOf(DynamoDBServiceException);
    expect(error).toMatchObject({
      name: 'ConditionalCheckFailedException',
      message: 'The conditional request failed',
      Item: { a: 1 },
      $metadata: { httpStatusCode: 400 },
    });
  });

  it('are the service base class under their own name when the SDK does not model them', () => {
    const error = unmodelled('sqs', 'InvalidParameterValue', 'bad', { Code: 'InvalidParameterValue' });
    expect(error).toBeInstanceOf(SQSServiceException);
    expect(error).toMatchObject({
      name: 'InvalidParameterValue',
      $fault: 'client',
      Code: 'InvalidParameterValue',
    });
    expect(unmodelled('dynamodb', 'InternalServerError', 'x', {}, 'server')).toMatchObject({
      $fault: 'server',
      $metadata: { httpStatusCode: 500 },
    });
    expect(validation('nope')).toMatchObject({ name: 'ValidationException', message: 'nope' });
  });
});
