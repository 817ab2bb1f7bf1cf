/**
 * The import rules of fanin's layers (docs/architecture.md, "The layers"), checked by
 * `npm run lint` (`npm run lint:layers` alone). Type-only imports count: a type cycle is a cycle.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import cycle: two modules that import each other are one concern, or want a port between them.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'sdk-only-in-adapters',
      severity: 'error',
      comment:
        'Within shared/, only the adapters (and shared/aws, which builds their clients) import the AWS SDK; ' +
        'shared/client is the producers and responders library (@fanin/client), an SDK caller by purpose.',
      from: { path: '^shared/', pathNot: '^shared/(adapters|aws|client)/' },
      to: { path: 'node_modules/@aws-sdk/' },
    },
    {
      name: 'adapters-import-no-use-case',
      severity: 'error',
      comment:
        'Adapters implement ports; a use case is what calls them, never what they call (the use cases of ' +
        'shared/ and of the partitions: routing, the distributor). A loop that takes messages and hands ' +
        'them to a use case is a use case over a port (the reply drain: use-cases/reply-drain.ts over DrainQueue).',
      from: { path: '^shared/adapters/' },
      to: { path: ['^shared/use-cases/', '^shared/partitions/(distributor|routing)\\.ts$'] },
    },
    {
      name: 'engine-is-pure',
      severity: 'error',
      comment:
        'The engine is plain TypeScript: it imports only itself and shared/errors.ts (no port, adapter, ' +
        'use case, SDK or Lambda type).',
      from: { path: '^shared/engine/' },
      to: {
        pathNot: [
          '^shared/engine/',
          '^shared/errors\\.ts$',
          '^node_modules/(zod|jsonata)/',
          '^(node:)?crypto$',
        ],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'shared-imports-no-local',
      severity: 'error',
      comment: 'shared/ is what the handlers run: it never reaches into the local runtime or the CLI.',
      from: { path: '^shared/' },
      to: { path: '^local/' },
    },
    {
      name: 'client-package-imports-no-local',
      severity: 'error',
      comment: 'The published client (@fanin/client) is built from shared/ alone: nothing of local/.',
      from: { path: '^packages/client/src/' },
      to: { path: '^local/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/|^cdk\\.out/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
