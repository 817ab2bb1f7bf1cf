import { listed, prose } from './format.ts';
import type { Results } from './schema.ts';

/** What went wrong during the run, if anything: failed records, loop errors, unknown item sizes. */
export function sanitySection(r: Results): string[] {
  return [
    '## Sanity',
    '',
    prose`Failed records ${r.sanity.failed_records}, poller errors ${r.sanity.poller_errors}, responder errors
      ${r.sanity.responder_errors}, collector errors ${r.sanity.collector_errors}; transactional updates of
      items the meter had not seen (costed as 1 KB) ${listed(r.sanity.transaction_sizes_unknown, 0) || 'none'};
      outputs seen: ${listed(r.sanity.outputs_seen, 0)}.`,
    '',
  ];
}
