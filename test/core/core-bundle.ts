// Bundles the core (with zod) the way the shells do: one minified IIFE, no Node globals. Used by the bare-V8
// test and by the size figures.
import { buildSync } from 'esbuild';
import * as path from 'node:path';

export function bundleCore(): { code: string; bytes: number } {
  const result = buildSync({
    entryPoints: [path.join(__dirname, '../../shared/index.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    globalName: 'DapaCore',
    platform: 'neutral',
    target: 'es2019',
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].text;
  return { code, bytes: Buffer.byteLength(code) };
}
