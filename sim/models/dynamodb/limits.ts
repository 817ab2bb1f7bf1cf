/** DynamoDB's limits the model enforces. */
export const DYNAMODB_LIMITS = {
  transactionItems: 100,
  transactionBytes: 4 * 1024 * 1024,
  batchWrite: 25,
  batchGet: 100,
} as const;
