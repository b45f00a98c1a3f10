// The Sheets shell's wording (apps-script/src/messages.ts): built from the core's codes and the server's own text,
// never parsed back out of a sentence.
import { formulaError, statusText } from '../../apps-script/src/messages';

describe('words from codes', () => {
  it("quotes the server's own text in the formula error for a wrong key or an expired plan, and says where to fix it", () => {
    expect(
      formulaError({ code: 'bad_key', retryable: false, serverText: 'incorrect API key provided' }),
    ).toBe(
      'The DAPA API key was rejected ("incorrect API key provided"): it is wrong or missing. Fix it in Extensions → DAPA → Set API key.',
    );
    expect(formulaError({ code: 'not_premium', retryable: false })).toBe(
      'Your DAPA plan has expired or does not allow this request. Renew the plan, or set another key in Extensions → DAPA → Set API key.',
    );
    const blocked = formulaError({ code: 'network_blocked', retryable: false, detail: { status: 403 } });
    // A Sheets user cannot move Google's servers to another network: the advice is support or a self-hosted n8n.
    expect(blocked).not.toMatch(/another network|check from/i);
    expect(blocked).toMatch(/Ask DAPA checker support .* to allow Google Apps Script/);
    expect(blocked).toMatch(/refused requests from this server's network \(HTTP 403\)/);
  });

  it('gives a Status cell the code first, a blank row its own words, a record none', () => {
    expect(
      statusText({ kind: 'skip', reason: 'lookup_failed', retryable: true, serverText: 'Lookup failed.' }),
    ).toBe('lookup_failed: Lookup failed.');
    expect(
      statusText({
        kind: 'error',
        code: 'server_error',
        retryable: true,
        detail: { cause: 'HTTP 502', failures: 3 },
      }),
    ).toBe('server_error: The DAPA service kept failing (HTTP 502, 3 times in a row). Try again later.');
    expect(statusText({ kind: 'skip', reason: 'empty_url', retryable: false, blank: true })).toBe(
      'empty_url: Empty cell: nothing to check.',
    );
    expect(
      statusText({
        kind: 'record',
        key: 'a.com',
        cached: false,
        record: { domain: 'a.com', site_da: 1, site_pa: 2, site_mr: 3, spam_score: 4 },
      }),
    ).toBe('');
  });
});
