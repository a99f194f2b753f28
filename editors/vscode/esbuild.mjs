// Bundles the extension (dist/extension.js) or, with --tests, the unit tests
// (dist-test/*.test.js, run with node --test).
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');

if (args.has('--tests')) {
  await esbuild.build({
    entryPoints: readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`),
    outdir: 'dist-test',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // The unit tests cover the vscode-free modules only; importing vscode is a bug.
    external: [],
    logLevel: 'warning',
  });
} else {
  const ctx = await esbuild.context({
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    external: ['vscode'],
    sourcemap: !production,
    minify: production,
    logLevel: 'warning',
  });
  if (args.has('--watch')) {
    await ctx.watch();
  } else {
    await ctx.rebuild();
    await ctx.dispose();
  }
}
