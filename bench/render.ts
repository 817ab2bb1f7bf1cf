/** `npm run bench:render`: renders `bench/results/*.md` and their charts again from the JSON, measuring nothing. */
import { rerender } from './report/files.ts';

const written = await rerender(new URL('./results/', import.meta.url));
process.stdout.write(
  `${written.length > 0 ? `bench/results/: ${written.join(', ')}` : 'no results to render'}\n`,
);
