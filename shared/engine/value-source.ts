import { z } from 'zod';
import { isValidPath } from './path.ts';

/** A path into a JSON body, such as `$.quote.rate` or `items[0].sku`. */
export const PathSchema = z
  .string()
  .refine(isValidPath, { message: 'must be a path such as $.quote.rate or items[0].sku' });

/**
 * Where a value (a correlation id, a reply id, a score) comes from: a message attribute, a path
 * into the JSON body, or a JSONata expression over `{ body, attributes }`.
 */
export const ValueSourceSchema = z.discriminatedUnion('source', [
  z.strictObject({ source: z.literal('attribute'), name: z.string().min(1).max(256) }),
  z.strictObject({ source: z.literal('path'), path: PathSchema }),
  z.strictObject({ source: z.literal('jsonata'), expression: z.string().min(1).max(4096) }),
]);
export type ValueSource = z.infer<typeof ValueSourceSchema>;
