import type { Results } from './schema.ts';

/** What went wrong during the run, if anything: failed records, loop errors, unknown item sizes, outputs seen. */
export function sanitySection(r: Results): string[] {
  return [
    '## Sanity',
    '',
    `Failed records ${r.sanity.failedRecords}, poller errors ${r.sanity.pollerErrors}, responder errors ${r.sanity.responderErrors}, collector errors ${r.sanity.collectorErrors}; transactional updates of items the meter had not seen (costed as 1 KB) ${
      Object.entries(r.sanity.transactionSizesUnknown)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }; outputs seen: ${Object.entries(r.sanity.outputsSeen)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
  ];
}
