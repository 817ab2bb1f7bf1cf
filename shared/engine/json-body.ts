import { BadMessageError } from '../errors.ts';
import { jsonDepth, MAX_JSON_DEPTH } from './limits.ts';

/** Parses a message body as JSON, or throws {@link BadMessageError} (also when it nests too deep). */
export function parseJsonBody(message: { readonly body: string }): unknown {
  if (jsonDepth(message.body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    throw new BadMessageError(`body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`);
  try {
    return JSON.parse(message.body);
  } catch (error) {
    // V8's message quotes the body; the reason must not (it is logged), so keep only where it broke.
    const at = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new BadMessageError(`body is not valid JSON${at ? ` (at position ${at})` : ''}`, { cause: error });
  }
}
