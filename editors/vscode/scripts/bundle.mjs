// Bundle src/extension.ts (and vscode-languageclient) into dist/extension.js with esbuild.
// Usage: node scripts/bundle.mjs [--production]   (production: minified, no source map)
import { build } from 'esbuild';

const production = process.argv.includes('--production');

await build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode'],
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  legalComments: 'none',
});
