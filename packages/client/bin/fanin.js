#!/usr/bin/env node
// The `fanin` command: the CLI compiled to plain JavaScript by `npm run build` (no TypeScript loader).
// The SDK warns on every run that its 2027 releases need Node 22; fanin targets Node 20 on purpose.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
await import('../dist/cli.js');
