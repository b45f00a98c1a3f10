// The core runs unchanged in a bare V8 realm: no setTimeout, URL, TextEncoder, process, fetch (as in Apps Script).
import * as vm from 'node:vm';
import { bundleCore } from './core-bundle';
import { ScriptedApi } from '../sandbox/scripted';

// 40 KB until the core owned the window across executions (window.ts) and worded outcomes from codes (wording.ts);
// 48 KB until the run took a credit budget (issue 21: the ceiling, its outcome and its wording, about 0.5 KB); 49 KB
// until the quick path of plain hosts (issue 34: a 50,000-row range is read at every look; about 0.15 KB).
const MAX_CORE_BYTES = 50 * 1024;

describe('the bundled core', () => {
  const { code, bytes } = bundleCore();

  test(`is at most ${MAX_CORE_BYTES / 1024} KB minified with zod (now ${(bytes / 1024).toFixed(1)} KB)`, () => {
    expect(bytes).toBeLessThanOrEqual(MAX_CORE_BYTES);
  });

  test('runs a whole check inside a bare node:vm realm with only a synchronous send and sleep', () => {
    const context = vm.createContext({});
    const globals = vm.runInContext(
      'typeof setTimeout + typeof URL + typeof TextEncoder + typeof process + typeof fetch',
      context,
    );
    expect(globals).toBe('undefinedundefinedundefinedundefinedundefined');
    vm.runInContext(code, context);
    const api = new ScriptedApi({ maxUrls: 2, faults: ['502html'], reverse: true });
    context.hostSend = (body: string) => {
      try {
        return JSON.stringify(api.handle({ method: 'POST', url: 'x', headers: {}, body }));
      } catch (e) {
        return JSON.stringify({ networkError: String(e) });
      }
    };
    const result = vm.runInContext(
      `(function () {
        var t = 0;
        var run = new DapaCore.CheckRun(['a.com', 'www.b.com', 'c.com', '', 7, 'a.com/x'], { baseUrl: 'http://sandbox', deadline: 600000 });
        var report = DapaCore.runSync(run, {
          now: function () { return t; },
          sleep: function (ms) { t += ms; },
          send: function (req) { t += 50; return JSON.parse(hostSend(req.body)); }
        });
        return JSON.stringify(report);
      })()`,
      context,
    );
    const report = JSON.parse(result as string);
    expect(report.outcomes.map((o: { kind: string }) => o.kind)).toEqual([
      'record',
      'record',
      'record',
      'skip',
      'skip',
      'record',
    ]);
    expect(report.learned.maxUrlsPerRequest).toBe(2);
    expect(report.totals.billed).toBe(3);
    expect(report.totals.responses.transient).toBe(1);
  });
});
