/**
 * Errors of the models, shaped as the SDK v3 throws them: instances of the service's exception
 * classes (so `instanceof ConditionalCheckFailedException` in the adapters holds), with `name`,
 * `message`, `$fault` and `$metadata`. An error the SDK does not model (DynamoDB's
 * `ValidationException`) is an instance of the service's base exception with that name, as the
 * SDK deserializes it.
 */
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { EventBridgeServiceException } from '@aws-sdk/client-eventbridge';
import { S3ServiceException } from '@aws-sdk/client-s3';
import { SQSServiceException } from '@aws-sdk/client-sqs';

/** What every model error carries, as the SDK's deserializer leaves it. */
export const METADATA = { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 } as const;

// biome-ignore lint/suspicious/noExplicitAny: the SDK's exception constructors take per-class option types
type ExceptionClass = new (options: any) => Error;

/** An instance of an SDK exception class, with its modelled `fields`. */
export function sdkError(
  Class: ExceptionClass,
  message: string,
  fields: Record<string, unknown> = {},
  httpStatusCode = 400,
): Error {
  const error = new Class({ message, $metadata: { ...METADATA, httpStatusCode }, ...fields });
  Object.assign(error, fields);
  return error;
}

/** An error the SDK does not model: an instance of the service's base exception named `name`. */
export function unmodelled(
  service: 'dynamodb' | 'sqs' | 's3' | 'eventbridge',
  name: string,
  message: string,
  fields: Record<string, unknown> = {},
  fault: 'client' | 'server' = 'client',
): Error {
  const Base = {
    dynamodb: DynamoDBServiceException,
    sqs: SQSServiceException,
    s3: S3ServiceException,
    eventbridge: EventBridgeServiceException,
  }[service];
  const error = new Base({
    name,
    $fault: fault,
    message,
    $metadata: { ...METADATA, httpStatusCode: fault === 'client' ? 400 : 500 },
  });
  Object.assign(error, { Message: message, ...fields });
  return error;
}

/** DynamoDB's `ValidationException` with its message. */
export function validation(message: string): Error {
  return unmodelled('dynamodb', 'ValidationException', message);
}
