/** `npm run bench:render`: renders the reports in `bench/results/` again from their JSON, measuring nothing. */
import { rerender } from './report/files.ts';

const written = await rerender(new URL('./results/', import.meta.url));
process.stdout.write(
  `${written.length > 0 ? `bench/results/: ${written.join(', ')}` : 'no results to render'}\n`,
);
