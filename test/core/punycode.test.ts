// Internationalized domains are sent as the DNS spells them: the core's Punycode agrees with Node's own
// (which Apps Script does not have) on labels of many scripts.
import fc from 'fast-check';
import { domainToASCII } from 'node:url';
import { toAsciiHost } from '../../shared/punycode';

const letters = [...'abcxyz09-üñçéßøåжпрфйαβγδ例え日本中文ไทยعربي'];
const label = fc
  .array(fc.constantFrom(...letters), { minLength: 1, maxLength: 20 })
  .map((cs) => cs.join(''))
  .filter((l) => !l.startsWith('-') && !l.endsWith('-') && l.slice(2, 4) !== '--');

describe('internationalized domains', () => {
  test('are encoded label by label exactly as Node encodes them', () => {
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 3 }), (labels) => {
        const host = [...labels, 'com'].join('.');
        const expected = domainToASCII(host);
        fc.pre(expected !== '');
        expect(toAsciiHost(host)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  test('leave ASCII hosts as they are', () => {
    expect(toAsciiHost('www.example.co.uk')).toBe('www.example.co.uk');
  });
});
