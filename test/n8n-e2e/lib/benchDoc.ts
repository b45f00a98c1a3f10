// BENCH.md is written by four programs: bench.ts (the side-by-side table), queue.ts (queue mode), shared.ts (scaling
// out, issue 35) and longlist.ts (the entry plan). Each owns one section between markers and rewrites only that;
// the rest of the file is kept.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { E2E_DIR } from './n8n';

export const BENCH_FILE = path.join(E2E_DIR, 'BENCH.md');
export type SectionName = 'queue' | 'scaling' | 'entry-plan';
const ORDER: SectionName[] = ['queue', 'scaling', 'entry-plan'];

const start = (name: SectionName) => `<!-- section:${name} (generated, do not edit by hand) -->`;
const end = (name: SectionName) => `<!-- /section:${name} -->`;

/** The marked sections of a document, by name (the markers included). */
export function sectionsOf(doc: string): Map<SectionName, string> {
  const found = new Map<SectionName, string>();
  for (const name of ORDER) {
    const from = doc.indexOf(start(name));
    const to = doc.indexOf(end(name));
    if (from >= 0 && to > from) found.set(name, doc.slice(from, to + end(name).length));
  }
  return found;
}

/** The document with the marked sections removed (what bench.ts owns). */
export function withoutSections(doc: string): string {
  let out = doc;
  for (const section of sectionsOf(doc).values()) out = out.replace(section, '');
  return out.trimEnd() + '\n';
}

/** `main` followed by the sections, in a fixed order. */
export function assemble(main: string, sections: Map<SectionName, string>): string {
  const parts = [withoutSections(main).trimEnd()];
  for (const name of ORDER) {
    const section = sections.get(name);
    if (section) parts.push(section);
  }
  return parts.join('\n\n') + '\n';
}

async function format(file: string, doc: string): Promise<string> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return await prettier.format(doc, { ...options, filepath: file });
}

/** Rewrites one section of `file` (BENCH.md by default) with `markdown`, keeping everything else. */
export async function writeSection(name: SectionName, markdown: string, file = BENCH_FILE): Promise<void> {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const sections = sectionsOf(current);
  sections.set(name, `${start(name)}\n\n${markdown.trim()}\n\n${end(name)}`);
  writeFileSync(file, await format(file, assemble(current, sections)));
}

/** Writes bench.ts's document to `file`, with the sections of the committed BENCH.md kept after it. */
export async function writeMain(doc: string, file: string): Promise<void> {
  const committed = existsSync(BENCH_FILE) ? readFileSync(BENCH_FILE, 'utf8') : '';
  writeFileSync(file, await format(file, assemble(doc, sectionsOf(committed))));
}
