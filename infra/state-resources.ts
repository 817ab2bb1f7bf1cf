import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { Topology } from '../shared/topology/topology.ts';

/** What the state table fanin creates depends on besides the topology. */
export interface StateTableOptions {
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
  /** A customer managed key. @default - the AWS managed key `aws/dynamodb` */
  readonly encryptionKey?: kms.IKey;
}

/**
 * The state table of the topology, as construct `Table` of `scope` (the id is part of the
 * deployed resource's logical id: never change it): on demand, TTL, point-in-time recovery, the
 * topology's indexes, and a resource policy denying requests without TLS.
 */
export function createStateTable(
  scope: Construct,
  topology: Topology,
  options: StateTableOptions,
): dynamodb.Table {
  const spec = topology.table;
  const table = new dynamodb.Table(scope, 'Table', {
    tableName: spec.name,
    partitionKey: attribute(spec.partitionKey),
    sortKey: attribute(spec.sortKey),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: spec.ttlAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    // AWS managed key (aws/dynamodb) by default: key use is visible in CloudTrail, no key to pay
    // for or rotate; or the user's customer managed key.
    ...(options.encryptionKey
      ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: options.encryptionKey }
      : { encryption: dynamodb.TableEncryption.AWS_MANAGED }),
    // DynamoDB's endpoints also answer plain HTTP; the queues and the bucket refuse it in their
    // policies (CDK's enforceSSL), and the table does the same in its resource policy. `*` is
    // the table itself and its indexes: a table policy cannot name its own ARN before it exists.
    resourcePolicy: new iam.PolicyDocument({
      statements: [
        new iam.PolicyStatement({
          sid: 'DenyInsecureTransport',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['dynamodb:*'],
          resources: ['*'],
          conditions: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      ],
    }),
    deletionProtection: options.deletionProtection,
    removalPolicy: options.removalPolicy,
  });
  for (const index of spec.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: attribute(index.partitionKey),
      sortKey: attribute(index.sortKey),
      projectionType:
        index.projection === 'ALL' ? dynamodb.ProjectionType.ALL : dynamodb.ProjectionType.KEYS_ONLY,
    });
  }
  return table;
}

/** What the payload bucket fanin creates depends on. */
export interface PayloadBucketOptions {
  /** Days before an object expires (every prefix). */
  readonly expirationDays: number;
  readonly removalPolicy: RemovalPolicy;
  readonly autoDeleteObjects: boolean;
  /** @default - no server access logs */
  readonly serverAccessLogsBucket?: s3.IBucket;
  /** A customer managed key (SSE-KMS with an S3 bucket key). @default - SSE-S3 */
  readonly encryptionKey?: kms.IKey;
}

/**
 * The claim-check bucket, as construct `Payloads` of `scope` (never change the id): TLS 1.2+ only,
 * public access blocked, bucket-owner-enforced ownership, every object expiring after
 * `expirationDays`, incomplete uploads after a day.
 */
export function createPayloadBucket(scope: Construct, options: PayloadBucketOptions): s3.Bucket {
  const bucket = new s3.Bucket(scope, 'Payloads', {
    ...(options.encryptionKey
      ? { encryption: s3.BucketEncryption.KMS, encryptionKey: options.encryptionKey, bucketKeyEnabled: true }
      : { encryption: s3.BucketEncryption.S3_MANAGED }),
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [
      {
        // No prefix: incoming/, state/ and outputs/ all live at least as long as the state.
        id: 'expire-claim-checks',
        expiration: Duration.days(options.expirationDays),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
    ],
    removalPolicy: options.removalPolicy,
    autoDeleteObjects: options.autoDeleteObjects,
    ...(options.serverAccessLogsBucket
      ? { serverAccessLogsBucket: options.serverAccessLogsBucket, serverAccessLogsPrefix: 'fanin-payloads/' }
      : {}),
  });
  if (!options.serverAccessLogsBucket) {
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Claim-check objects live for days and are read once by fanin; server access logs would cost more than the data. Pass serverAccessLogsBucket (or use CloudTrail data events) to audit access.',
    });
  }
  return bucket;
}

function attribute(key: { readonly name: string; readonly type: 'S' | 'N' }): dynamodb.Attribute {
  return {
    name: key.name,
    type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
  };
}
