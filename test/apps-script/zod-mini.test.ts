// The Apps Script bundle parses the wire with apps-script/zod-mini.ts in place of zod/mini: the same schemas
// (shared/wire.ts, loaded once with each) must accept and reject the same input and give the same data.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { DIST_DIR } from './harness';

type Wire = typeof import('../../shared/wire');

function loadWire(withLite: boolean): Wire {
  let wire: Wire | undefined;
  jest.isolateModules(() => {
    if (withLite) jest.doMock('zod/mini', () => jest.requireActual('../../apps-script/zod-mini'));
    else jest.dontMock('zod/mini');
    wire = jest.requireActual<Wire>('../../shared/wire');
  });
  return wire as Wire;
}

const real = loadWire(false);
const lite = loadWire(true);
const SCHEMAS = ['DomainRecordSchema', 'SkippedEntrySchema', 'EnvelopeSchema'] as const;

/** Values a JSON body may hold, and a few it cannot (undefined, NaN, Infinity), in the shapes of the wire. */
const scalar = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom(NaN, Infinity, -Infinity, '12', ''),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('record'), tie('wireLike')),
  list: fc.array(tie('any'), { maxLength: 4 }),
  record: fc.dictionary(fc.string({ maxLength: 4 }), tie('any'), { maxKeys: 4 }),
  wireLike: fc.record(
    {
      domain: tie('any'),
      site_da: tie('any'),
      site_pa: scalar,
      site_mr: scalar,
      spam_score: scalar,
      reason: tie('any'),
      url: scalar,
      index: scalar,
      message: scalar,
      status: scalar,
      data: fc.oneof(tie('list'), scalar),
      summary: fc.oneof(fc.record({ submitted: scalar, processed: scalar, skipped: scalar }), scalar),
      skipped: fc.oneof(tie('list'), scalar),
      extra: scalar,
    },
    { requiredKeys: [] },
  ),
})).any;

describe('zod-mini, the Apps Script stand-in for zod/mini', () => {
  it.each(SCHEMAS)('%s accepts and rejects what zod does, with the same data (property)', (name) => {
    fc.assert(
      fc.property(value, (input) => {
        const expected = real[name].safeParse(input);
        const actual = lite[name].safeParse(input);
        expect(actual.success).toBe(expected.success);
        if (expected.success && actual.success) expect(actual.data).toStrictEqual(expected.data);
      }),
      { numRuns: 3_000 },
    );
  });

  it('reads real answers as zod does, and the built bundle carries none of zod', () => {
    const answer = {
      status: 200,
      data: [{ domain: 'a.com', site_da: '12', site_pa: null, spam_score: 1, junk: true }],
      summary: { submitted: 2, processed: 1, skipped: 1 },
      skipped: [{ index: 1, url: 'x', reason: 'invalid_url_format' }],
    };
    expect(lite.EnvelopeSchema.safeParse(answer)).toEqual(real.EnvelopeSchema.safeParse(answer));
    expect(lite.DomainRecordSchema.safeParse(answer.data[0])).toEqual(
      real.DomainRecordSchema.safeParse(answer.data[0]),
    );
    expect(lite.EnvelopeSchema.safeParse({ data: 'x' }).success).toBe(false);
    const code = fs.readFileSync(path.join(DIST_DIR, 'Code.js'), 'utf8');
    expect(code).not.toContain('_zod');
  });
});
