import { createClients } from '../../shared/aws/clients.ts';

/**
 * The AWS clients of a test worker, its composition root: built once per worker (each client on
 * first use) with the SDK's standard settings, which the global setup gave the worker
 * (`AWS_ENDPOINT_URL_<SERVICE>` of the emulators, or LocalStack's `AWS_ENDPOINT_URL`). Tests that
 * need a client of their own (instrumented, broken, with other options) create one with
 * `create*Client` from `shared/aws/clients.ts`.
 */
export const aws = createClients();
