#!/usr/bin/env node
// The `fanin` command. Node 20 cannot run TypeScript by itself, so this shim registers tsx's ESM
// loader (a devDependency of this package) and hands over to the TypeScript entry point.
import { register } from 'tsx/esm/api';

// The SDK warns on every run that its 2027 releases need Node 22; fanin targets Node 20 on purpose.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('../local/cli/main.ts');
