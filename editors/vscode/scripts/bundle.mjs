// Bundle src/extension.ts (and vscode-languageclient) into dist/extension.js, and the chat
// view's script (webview/main.ts with markdown-it and highlight.js) into dist/webview.js
// with its stylesheet dist/webview.css, with esbuild.
// Usage: node scripts/bundle.mjs [--production]   (production: minified, no source map)
import { copyFile, mkdir } from 'node:fs/promises';
import { build } from 'esbuild';

const production = process.argv.includes('--production');
const common = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  legalComments: 'none',
};

await build({
  ...common,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode'],
});
await build({
  ...common,
  entryPoints: ['webview/main.ts'],
  outfile: 'dist/webview.js',
  platform: 'browser',
  target: 'chrome120',
  format: 'iife',
});
await mkdir('dist', { recursive: true });
await copyFile('webview/style.css', 'dist/webview.css');
