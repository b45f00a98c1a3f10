// The DAPA Checker node as an n8n user sees it, run through a test double of IExecuteFunctions whose HTTP goes to
// the sandbox API over real HTTP: values, pairing, skips, duplicates, faults, a wrong key, an expired plan, waits,
// cancellation, and the credential test.
import {
  NodeApiError,
  NodeOperationError,
  type ICredentialDataDecryptedObject,
  type IDataObject,
  type INodeExecutionData,
} from 'n8n-workflow';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { forgetRememberedWindows } from '../../n8n-node/nodes/DapaChecker/planWindow';
import { BLANK_URL_MESSAGE } from '../../n8n-node/nodes/DapaChecker/outputs';
import { DEFAULT_SETTINGS } from '../../n8n-node/nodes/DapaChecker/description';
import {
  runsAsTool,
  timeLimitSeconds,
  TOOL_TIME_LIMIT_SECONDS,
} from '../../n8n-node/nodes/DapaChecker/settings';
import { DEFAULT_CONFIG, hasNoSpamData, metricsFor, type SandboxConfig } from '../sandbox/handler';
import { startSandbox, type RunningSandbox } from '../sandbox/server';
import { createExecuteContext, useSandboxServer, type ContextSetup } from './executeContext';

let server: RunningSandbox;

useSandboxServer((started) => (server = started)); // every test starts like a fresh n8n process

function credentials(apiKey: string): ICredentialDataDecryptedObject {
  return { apiKey, environment: 'custom', baseUrl: server.url };
}

async function execute(setup: Omit<ContextSetup, 'credentials'> & { apiKey?: string }) {
  const { apiKey = 'sandbox-premium', ...rest } = setup;
  const double = createExecuteContext({ ...rest, credentials: credentials(apiKey) });
  const [results, skipped] = await new DapaChecker().execute.call(double.context);
  return { results, skipped, ...double };
}

const pairedIndex = (item: INodeExecutionData) => (item.pairedItem as { item: number }).item;

function expectMetrics(json: IDataObject, domain: string) {
  const expected = metricsFor(domain);
  expect({
    domain: json.domain,
    site_da: json.site_da,
    site_pa: json.site_pa,
    site_mr: json.site_mr,
    spam_score: json.spam_score,
  }).toEqual({ domain, ...expected });
}

function configure(config: Partial<SandboxConfig>) {
  server.sandbox.configure({ ...DEFAULT_CONFIG, ...config });
}

describe('DAPA Checker node', () => {
  test('every item comes out once, on Results or Skipped, paired with its input and keeping its fields', async () => {
    const urls: Array<string | number | undefined> = [
      'example.com',
      'https://www.Example.com/some/page?x=1',
      'moz.com',
      '',
      '   ',
      'not a domain',
      42,
      'sub.wikipedia.org',
      undefined,
    ];
    const { results, skipped } = await execute({ items: urls.map((url, id) => ({ id, url })) });

    expect(results.length + skipped.length).toBe(urls.length);
    const seen = [...results, ...skipped].map(pairedIndex).sort((a, b) => a - b);
    expect(seen).toEqual(urls.map((_u, i) => i));
    for (const item of [...results, ...skipped]) expect(item.json.id).toBe(pairedIndex(item));

    const byIndex = new Map(results.map((item) => [pairedIndex(item), item.json]));
    expectMetrics(byIndex.get(0)!, 'example.com');
    expectMetrics(byIndex.get(1)!, 'example.com');
    expectMetrics(byIndex.get(2)!, 'moz.com');
    expectMetrics(byIndex.get(7)!, 'sub.wikipedia.org');
    expect(byIndex.get(1)!.url).toBe('https://www.Example.com/some/page?x=1');

    const reasons = Object.fromEntries(skipped.map((item) => [pairedIndex(item), item.json.reason]));
    expect(reasons).toEqual({
      3: 'empty_url',
      4: 'empty_url',
      5: 'invalid_url_format',
      6: 'invalid_url_format',
      8: 'empty_url',
    });
    const blank = skipped.find((item) => pairedIndex(item) === 3)!;
    expect(blank.json.message).toBe(BLANK_URL_MESSAGE);
    expect(String(skipped.find((item) => pairedIndex(item) === 6)!.json.message)).toMatch(/number 42/);
  });

  test('a mere skip never carries an error: no json.error and no item.error on either output', async () => {
    const { results, skipped } = await execute({
      items: [{ url: 'not a domain' }, { url: '' }, { url: 'example.com' }],
    });
    expect(skipped).toHaveLength(2);
    for (const item of [...results, ...skipped]) {
      expect(item.json).not.toHaveProperty('error');
      expect(item.error).toBeUndefined();
    }
  });

  test('1,000 items with 400 distinct domains: each domain billed once, in few requests', async () => {
    const items = Array.from({ length: 1000 }, (_v, i) => ({
      row: i,
      url: i % 3 === 0 ? `https://WWW.site${i % 400}.com/page${i}` : `site${i % 400}.com`,
    }));
    const started = Date.now();
    const { results, skipped, sent } = await execute({ items });
    const ms = Date.now() - started;

    expect(results).toHaveLength(1000);
    expect(skipped).toHaveLength(0);
    for (const item of results) expectMetrics(item.json, `site${pairedIndex(item) % 400}.com`);
    const stats = server.sandbox.stats()['sandbox-premium'];
    expect(stats.billed).toBe(400);
    expect(Object.values(stats.billedByDomain).every((times) => times === 1)).toBe(true);
    // One refused oversized first request (422, not billed), then batches of the plan's 50.
    expect(stats.requests).toBeLessThanOrEqual(9);
    expect(sent).toHaveLength(stats.requests);
    console.log(
      `n8n node, 1,000 items / 400 domains: ${stats.requests} requests, ${stats.billed} billed, ${ms} ms`,
    );
  });

  test('the API key goes only into the Authorization header, never into a URL, body or output', async () => {
    const { results, sent, hints } = await execute({ items: [{ url: 'example.com' }] });
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) {
      expect(request.headers.Authorization).toBe('Bearer sandbox-premium');
      expect(request.url).not.toContain('sandbox-premium');
      expect(request.body).not.toContain('sandbox-premium');
    }
    expect(JSON.stringify({ results, hints })).not.toContain('sandbox-premium');
  });

  test('a wrong key fails the node with a NodeApiError that says the key is wrong, without quoting it', async () => {
    const secret = 'wrong-key-d41d8cd98f00b204';
    const run = execute({ apiKey: secret, items: [{ url: 'example.com' }, { url: 'moz.com' }] });
    await expect(run).rejects.toBeInstanceOf(NodeApiError);
    const error = (await run.catch((e: unknown) => e)) as NodeApiError;
    expect(error.message).toMatch(/^Wrong API key/);
    expect(error.description).toMatch(/credential/i);
    expect(error.httpCode).toBe('401');
    expect(error.context.itemIndex).toBe(0);
    expect(`${error.message} ${error.description}`).not.toContain(secret);
  });

  test('an expired plan fails the node, saying the plan expired and what to do', async () => {
    const run = execute({ apiKey: 'sandbox-expired', items: [{ url: 'example.com' }] });
    const error = (await run.catch((e: unknown) => e)) as NodeApiError;
    expect(error).toBeInstanceOf(NodeApiError);
    expect(error.message).toMatch(/^Plan expired/);
    expect(error.description).toMatch(/Renew or upgrade the plan/);
  });

  test('an expired plan with continue on fail: every item to check gets the error, paired, and the run goes on', async () => {
    const { results, skipped } = await execute({
      apiKey: 'sandbox-expired',
      continueOnFail: true,
      onError: 'continueErrorOutput',
      items: [
        { id: 'a', url: 'example.com' },
        { id: 'b', url: 'moz.com' },
        { id: 'c', url: 'example.com' },
      ],
    });
    expect(skipped).toHaveLength(0);
    expect(results.map(pairedIndex)).toEqual([0, 1, 2]);
    for (const item of results) {
      expect(item.json.error).toMatch(/^Plan expired/);
      expect(item.error).toBeInstanceOf(NodeApiError);
      expect(item.json.id).toBe(['a', 'b', 'c'][pairedIndex(item)]);
      expect(item.json).not.toHaveProperty('site_da');
    }
    expect(server.sandbox.stats()['sandbox-expired'].billed).toBe(0);
  });

  test('faults (lookup failures, 500s, HTML 502s, shuffled and oddly spelled data) still resolve every item', async () => {
    configure({
      faults: {
        seed: 7,
        lookupFailedRate: 0.2,
        serverErrorRate: 0.15,
        html502Rate: 0.1,
        shuffleData: true,
        domainSpelling: 'mixed',
        numericStrings: true,
      },
    });
    const items = Array.from({ length: 150 }, (_v, i) => ({ url: `fault${i % 120}.org` }));
    const { results, skipped } = await execute({ items, options: { maxUrlsPerRequest: 25 } });

    expect(results.length + skipped.length).toBe(150);
    for (const item of results) expectMetrics(item.json, `fault${pairedIndex(item) % 120}.org`);
    for (const item of skipped) expect(item.json.reason).toBe('lookup_failed');
    const stats = server.sandbox.stats()['sandbox-premium'];
    expect(Object.values(stats.billedByDomain).every((times) => times === 1)).toBe(true);
    expect(stats.responsesByStatus['500'] ?? 0).toBeGreaterThan(0);
    expect(results.length).toBeGreaterThanOrEqual(140);
  });

  test('a plan that expires mid-run keeps the results already paid for; the rest go to Skipped with the reason', async () => {
    const plan = { keys: { 'sandbox-premium': { maxUrlsPerRequest: 2 } } };
    let midRun: RunningSandbox | undefined = undefined;
    midRun = await startSandbox({
      port: 0,
      config: plan,
      onRequest: (entry) => {
        if (entry.status === 200)
          midRun?.sandbox.configure({ keys: { 'sandbox-premium': { expired: true } } });
      },
    });
    try {
      const items = ['a.com', 'b.com', 'c.com', 'd.com', 'e.com'].map((url) => ({ url }));
      const setup = {
        items,
        options: { maxUrlsPerRequest: 2 },
        credentials: { apiKey: 'sandbox-premium', environment: 'custom', baseUrl: midRun.url },
      };
      const stopped = createExecuteContext(setup);
      const [results, skipped] = await new DapaChecker().execute.call(stopped.context);
      expect(results.map((item) => item.json.domain)).toEqual(['a.com', 'b.com']);
      expect(skipped.map((item) => [pairedIndex(item), item.json.reason])).toEqual([
        [2, 'not_premium'],
        [3, 'not_premium'],
        [4, 'not_premium'],
      ]);
      expect(stopped.hints[0]).toMatchObject({
        type: 'warning',
        message: expect.stringMatching(/^Stopped early/),
      });

      midRun.sandbox.configure(plan);
      // Results of the first execution are not reused here: the second meets the expiry at the same point.
      const options = { ...setup.options, reuseResultsHours: 0 };
      const continued = createExecuteContext({ ...setup, options, continueOnFail: true });
      const [withErrors, none] = await new DapaChecker().execute.call(continued.context);
      expect(none).toEqual([]);
      expect(withErrors.map((item) => [pairedIndex(item), item.json.error === undefined])).toEqual([
        [0, true],
        [1, true],
        [2, false],
        [3, false],
        [4, false],
      ]);
    } finally {
      await midRun.close();
    }
  });

  test('a URL expression that fails for one item fails the node on that item, before anything is sent', async () => {
    const url = (json: IDataObject) => {
      if (json.broken) throw new Error("Referenced node doesn't exist");
      return json.url;
    };
    const items = [{ url: 'example.com' }, { broken: true }, { url: 'moz.com' }];
    const error = (await execute({ items, url }).catch((e: unknown) => e)) as NodeOperationError;
    expect(error).toBeInstanceOf(NodeOperationError);
    expect(error.message).toBe('The URL parameter could not be read for item 1');
    expect(error.context.itemIndex).toBe(1);
    expect(server.sandbox.stats()['sandbox-premium'].requests).toBe(0);

    const { results, skipped } = await execute({ items, url, continueOnFail: true });
    expect(skipped).toEqual([]);
    expect(results.map((item) => [pairedIndex(item), item.json.domain ?? item.json.error])).toEqual([
      [0, 'example.com'],
      [1, 'The URL parameter could not be read for item 1'],
      [2, 'moz.com'],
    ]);
  });

  test('what a run learns of the plan is kept: the next execution sends no learning request', async () => {
    configure({
      keys: { ...DEFAULT_CONFIG.keys, 'ten-per-request': { maxUrlsPerRequest: 10, requestsPerMinute: 1000 } },
    });
    const staticData: IDataObject = {};
    const items = (tag: string) => Array.from({ length: 35 }, (_v, i) => ({ url: `${tag}${i}.org` }));
    const first = await execute({ apiKey: 'ten-per-request', items: items('first'), staticData });
    expect(first.results).toHaveLength(35);
    const afterFirst = server.sandbox.stats()['ten-per-request'];
    expect(afterFirst.responsesByStatus['422']).toBeGreaterThanOrEqual(1);
    const kept = JSON.stringify(staticData);
    expect(kept).toMatch(/"maxUrlsPerRequest":\{"value":10,"exact":true/);
    expect(kept).not.toContain('ten-per-request');

    forgetRememberedWindows(); // another process (a restart): only the static data is left
    const second = await execute({ apiKey: 'ten-per-request', items: items('second'), staticData });
    expect(second.results).toHaveLength(35);
    const afterSecond = server.sandbox.stats()['ten-per-request'];
    expect(afterSecond.responsesByStatus['422']).toBe(afterFirst.responsesByStatus['422']);
    expect(afterSecond.requests - afterFirst.requests).toBe(4);
    expect(second.sent.every((request) => JSON.parse(request.body).urls.length <= 10)).toBe(true);
  });

  test('without static data (a queue-mode worker), the same n8n process still sends no second learning request', async () => {
    configure({
      keys: { ...DEFAULT_CONFIG.keys, 'ten-per-request': { maxUrlsPerRequest: 10, requestsPerMinute: 1000 } },
    });
    const items = (tag: string) => Array.from({ length: 25 }, (_v, i) => ({ url: `${tag}${i}.org` }));
    await execute({ apiKey: 'ten-per-request', items: items('w1-'), staticData: {} });
    const afterFirst = server.sandbox.stats()['ten-per-request'];
    const second = await execute({ apiKey: 'ten-per-request', items: items('w2-'), staticData: {} });
    const afterSecond = server.sandbox.stats()['ten-per-request'];
    expect(second.results).toHaveLength(25);
    expect(afterSecond.responsesByStatus['422']).toBe(afterFirst.responsesByStatus['422']);
    expect(afterSecond.requests - afterFirst.requests).toBe(3);
  });

  // A key shared with other executions (inferred rates kept and probed up, the window shared): sharedKey.test.ts

  test('another key on the same node learns its own plan; a fresh node learns again', async () => {
    configure({
      keys: { ...DEFAULT_CONFIG.keys, 'ten-per-request': { maxUrlsPerRequest: 10, requestsPerMinute: 1000 } },
    });
    const staticData: IDataObject = {};
    await execute({ apiKey: 'ten-per-request', items: [{ url: 'a.org' }, { url: 'b.org' }], staticData });
    const items = Array.from({ length: 30 }, (_v, i) => ({ url: `premium${i}.org` }));
    const { sent } = await execute({ apiKey: 'sandbox-premium', items, staticData });
    expect(sent).toHaveLength(1);
    forgetRememberedWindows();
    const fresh = await execute({ apiKey: 'ten-per-request', items: items.slice(0, 12) });
    expect(fresh.sent.length).toBeGreaterThan(2);
    expect(server.sandbox.stats()['ten-per-request'].responsesByStatus['422']).toBeGreaterThanOrEqual(1);
  });

  test('a network block (403 page) fails the node as "Network blocked", not as a wrong key, after one request', async () => {
    configure({ faults: { blockNetwork: true } });
    const double = createExecuteContext({
      items: [{ url: 'example.com' }, { url: 'moz.com' }],
      credentials: credentials('sandbox-premium'),
    });
    const error = await new DapaChecker().execute.call(double.context).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeApiError);
    const apiError = error as NodeApiError;
    expect(apiError.message).toMatch(/^Network blocked: .*this is not your API key/);
    expect(apiError.message).not.toMatch(/wrong api key/i);
    expect(apiError.description).toMatch(/self-hosted n8n|another network/);
    expect(apiError.httpCode).toBe('403');
    expect(JSON.stringify(apiError)).not.toContain('sandbox-premium');
    expect(double.sent).toHaveLength(1);
  });

  test('with continue on fail, a network block is the error of every item, still after one request', async () => {
    configure({ faults: { blockNetwork: true } });
    const { results, sent } = await execute({
      items: [{ url: 'example.com' }, { url: 'moz.com' }],
      continueOnFail: true,
    });
    expect(sent).toHaveLength(1);
    expect(results.map((item) => String(item.json.error))).toEqual([
      expect.stringMatching(/^Network blocked/),
      expect.stringMatching(/^Network blocked/),
    ]);
  });

  test('metrics the service has no data for are null and named in no_data; no_data is [] otherwise', async () => {
    configure({ faults: { noDataRate: 0.5 } });
    const domains = Array.from({ length: 40 }, (_v, i) => `nodata${i}.com`);
    const { results } = await execute({ items: domains.map((url) => ({ url })) });
    expect(results).toHaveLength(40);
    const flagged = results.filter((item) => (item.json.no_data as string[]).length > 0);
    expect(flagged.length).toBeGreaterThan(5);
    expect(flagged.length).toBeLessThan(35);
    for (const item of results) {
      const domain = String(item.json.domain);
      const expected = metricsFor(domain, 0.5);
      if (hasNoSpamData(domain, 0.5)) {
        expect(item.json).toMatchObject({
          spam_score: null,
          no_data: ['spam_score'],
          site_da: expected.site_da,
        });
      } else {
        expect(item.json).toMatchObject({ spam_score: expected.spam_score, no_data: [] });
      }
    }
  });

  test('Staging needs the typed Base URL like Custom: without it the node says so, with it the node works', async () => {
    const double = createExecuteContext({
      items: [{ url: 'example.com' }],
      credentials: { apiKey: 'sandbox-premium', environment: 'staging', baseUrl: '' },
    });
    await expect(new DapaChecker().execute.call(double.context)).rejects.toThrow(/no usable base URL/);
    expect(double.sent).toHaveLength(0);
    const typed = createExecuteContext({
      items: [{ url: 'example.com' }],
      credentials: { apiKey: 'sandbox-premium', environment: 'staging', baseUrl: server.url },
    });
    const [results] = await new DapaChecker().execute.call(typed.context);
    expectMetrics(results[0].json, 'example.com');
  });

  test('a body that n8n hands over already parsed as JSON is read the same', async () => {
    const { results, skipped } = await execute({
      parsedBodies: true,
      items: [{ url: 'example.com' }, { url: 'not a domain' }, { url: 'moz.com' }],
    });
    expect(results.map((item) => item.json.domain)).toEqual(['example.com', 'moz.com']);
    expect(skipped.map((item) => item.json.reason)).toEqual(['invalid_url_format']);
  });

  test('without waiting for rate limits, URLs over the per-minute limit go to Skipped as rate_limit_reached at once', async () => {
    const items = Array.from({ length: 230 }, (_v, i) => ({ url: `upm${i}.net` }));
    const started = Date.now();
    const { results, skipped } = await execute({
      apiKey: 'sandbox-upm',
      items,
      options: { waitForRateLimits: false },
    });
    expect(results).toHaveLength(100);
    expect(skipped).toHaveLength(130);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const item of skipped) {
      expect(item.json.reason).toBe('rate_limit_reached');
      expect(item.json).not.toHaveProperty('error');
    }
    expect(server.sandbox.stats()['sandbox-upm'].billed).toBe(100);
  });

  test('without waiting for rate limits, a 429 does not make the node wait either: the rest go to Skipped', async () => {
    configure({
      keys: { ...DEFAULT_CONFIG.keys, 'three-per-minute': { maxUrlsPerRequest: 25, requestsPerMinute: 3 } },
    });
    const items = Array.from({ length: 100 }, (_v, i) => ({ url: `rpm${i}.io` }));
    const started = Date.now();
    const { results, skipped } = await execute({
      apiKey: 'three-per-minute',
      items,
      options: { waitForRateLimits: false },
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(results.length + skipped.length).toBe(100);
    expect(results.length).toBeGreaterThan(0);
    expect(new Set(skipped.map((item) => item.json.reason))).toEqual(new Set(['rate_limit_reached']));
    const stats = server.sandbox.stats()['three-per-minute'];
    expect(stats.responsesByStatus['429']).toBe(1);
    expect(stats.billed).toBe(results.length);
  });

  test('a wait longer than the maximum total wait ends the rest as "unfinished", with the results kept', async () => {
    const items = Array.from({ length: 130 }, (_v, i) => ({ url: `wait${i}.net` }));
    const started = Date.now();
    const { results, skipped } = await execute({
      apiKey: 'sandbox-upm',
      items,
      options: { maxWaitSeconds: 2 },
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(results).toHaveLength(100);
    expect(skipped).toHaveLength(30);
    for (const item of skipped) {
      expect(item.json.reason).toBe('unfinished');
      expect(item.json.message).toMatch(/maximum total wait/);
    }
  });

  test("as an AI agent's tool with no Time Limit set, the run stops at 60 s: what the plan leaves goes to Skipped", async () => {
    // sandbox-upm allows 100 URLs a minute: the last 30 of 130 could only go a minute after the first request,
    // past the tool's 60 s, so they end at once as "unfinished" instead of keeping the agent waiting.
    const items = Array.from({ length: 130 }, (_v, i) => ({ url: `tool${i}.net` }));
    const started = Date.now();
    const { results, skipped } = await execute({
      apiKey: 'sandbox-upm',
      items,
      nodeType: 'n8n-nodes-dapa-checker.dapaCheckerTool',
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(results).toHaveLength(100);
    expect(skipped).toHaveLength(30);
    for (const item of skipped) {
      expect(item.json.reason).toBe('unfinished');
      expect(item.json.message).toMatch(/time limit/);
    }
  });

  test('the tool default is only a default: a Time Limit the user set wins, and a plain node has none', () => {
    const settings = { ...DEFAULT_SETTINGS };
    expect(timeLimitSeconds(settings, 'n8n-nodes-dapa-checker.dapaCheckerTool')).toBe(
      TOOL_TIME_LIMIT_SECONDS,
    );
    expect(TOOL_TIME_LIMIT_SECONDS).toBe(60);
    expect(timeLimitSeconds(settings, 'n8n-nodes-dapa-checker.dapaChecker')).toBe(0);
    expect(
      timeLimitSeconds({ ...settings, timeLimitSeconds: 600 }, 'n8n-nodes-dapa-checker.dapaCheckerTool'),
    ).toBe(600);
    expect(runsAsTool(undefined)).toBe(false);
  });

  test('cancelling the execution stops the wait at once and ends the open URLs as "cancelled"', async () => {
    const controller = new AbortController();
    const items = Array.from({ length: 130 }, (_v, i) => ({ url: `cancel${i}.net` }));
    const started = Date.now();
    // Cancelled once the node waits for the plan's window: right after the answer that says the minute's URLs are
    // spent (a rate_limit_reached skip), as soon as the node has taken it in (the next macrotask), not after a time.
    const { results, skipped } = await execute({
      apiKey: 'sandbox-upm',
      items,
      cancelSignal: controller.signal,
      onAnswer: (_status, text) => {
        if (text.includes('rate_limit_reached')) setImmediate(() => controller.abort());
      },
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(results).toHaveLength(100);
    expect(skipped.map((item) => item.json.reason)).toEqual(Array(30).fill('cancelled'));
  });

  test('with input fields off, output items carry only the URL and the result or the reason', async () => {
    const { results, skipped } = await execute({
      items: [
        { url: 'example.com', secretNote: 'x' },
        { url: '', secretNote: 'y' },
      ],
      options: { includeInputFields: false },
    });
    expect(Object.keys(results[0].json).sort()).toEqual(
      [
        'checked_at',
        'domain',
        'no_data',
        'reused',
        'site_da',
        'site_mr',
        'site_pa',
        'spam_score',
        'url',
      ].sort(),
    );
    expect(Object.keys(skipped[0].json).sort()).toEqual(['message', 'reason', 'reused', 'url']);
  });

  test('binary data of an input item stays with it on Results and Skipped, unless input fields are off', async () => {
    const file = { data: 'aGVsbG8=', mimeType: 'text/plain', fileName: 'note.txt' };
    const setup = {
      items: [{ url: 'example.com' }, { url: 'nope' }],
      binaries: { 0: { file }, 1: { file } },
    };
    const kept = await execute(setup);
    expect(kept.results[0].binary).toEqual({ file });
    expect(kept.skipped[0].binary).toEqual({ file });
    const dropped = await execute({ ...setup, options: { includeInputFields: false } });
    expect([dropped.results[0].binary, dropped.skipped[0].binary]).toEqual([undefined, undefined]);
  });

  test('an option that is not a number fails the node with a message naming the option', async () => {
    const run = execute({ items: [{ url: 'example.com' }], options: { retries: 'many' } });
    const error = (await run.catch((e: unknown) => e)) as NodeOperationError;
    expect(error).toBeInstanceOf(NodeOperationError);
    expect(error.message).toBe('The option "Retries" must be a number from 0 to 10');
    expect(server.sandbox.stats()['sandbox-premium'].requests).toBe(0);
  });

  test('a credential without an API key fails with a message saying so, before anything is sent', async () => {
    const run = execute({ apiKey: '  ', items: [{ url: 'example.com' }] });
    await expect(run).rejects.toThrow('The DAPA Checker API credential has no API key.');
    expect(server.sandbox.stats()['(missing)']).toBeUndefined();
  });

  test('with continue on fail, a credential problem becomes the error of every item', async () => {
    const { results, skipped, sent } = await execute({
      apiKey: ' sandbox-premium\n',
      continueOnFail: true,
      items: [{ url: 'example.com' }, { url: 'moz.com' }],
    });
    expect(sent).toEqual([]);
    expect(skipped).toEqual([]);
    expect(results.map((item) => [pairedIndex(item), item.json.error])).toEqual([
      [0, 'The API key in the DAPA Checker API credential has spaces or line breaks around it.'],
      [1, 'The API key in the DAPA Checker API credential has spaces or line breaks around it.'],
    ]);
    expect(results.every((item) => item.error instanceof NodeOperationError)).toBe(true);
  });

  test('no items in, no request and two empty outputs', async () => {
    const { results, skipped, sent } = await execute({ items: [] });
    expect([results, skipped, sent]).toEqual([[], [], []]);
  });

  test('the summary hint reports requests and billed queries', async () => {
    const { hints } = await execute({ items: [{ url: 'example.com' }, { url: 'example.com' }] });
    expect(hints.map((h) => h.message)).toEqual([
      expect.stringMatching(/^2 items, 1 distinct domains: \d+ requests, 1 billed/),
    ]);
  });
});

describe('DAPA Checker credential test', () => {
  const test_ = async (data: ICredentialDataDecryptedObject) => {
    const credentialTest = new DapaChecker().methods.credentialTest.dapaCheckerApiTest;
    const context = {
      helpers: {
        request: () => {
          throw new Error('not used');
        },
      },
    };
    return await credentialTest.call(context as never, {
      id: '1',
      name: 'DAPA',
      type: 'dapaCheckerApi',
      data,
    });
  };

  test('tells a valid key, a wrong key and an expired plan apart, and bills nothing', async () => {
    const valid = await test_(credentials('sandbox-premium'));
    const wrong = await test_(credentials('not-a-key'));
    const expired = await test_(credentials('sandbox-expired'));
    expect(valid.status).toBe('OK');
    expect(wrong).toEqual({ status: 'Error', message: expect.stringMatching(/^Incorrect API key/) });
    expect(expired).toEqual({ status: 'Error', message: expect.stringMatching(/plan .*expired/) });
    expect(server.sandbox.stats()['sandbox-premium'].billed).toBe(0);
    expect(server.sandbox.stats()['sandbox-premium'].requests).toBe(1);
  });

  test('a network block is reported as the network, not the key, and says what to do', async () => {
    configure({ faults: { blockNetwork: true } });
    const result = await test_(credentials('sandbox-premium'));
    expect(result.status).toBe('Error');
    expect(result.message).toMatch(/refused requests from this server's network.*not your API key/);
    expect(result.message).toMatch(/self-hosted n8n|another network/);
    expect(result.message).not.toMatch(/incorrect api key/i);
  });

  test('a custom environment without a usable base URL is reported without sending anything', async () => {
    const result = await test_({
      apiKey: 'sandbox-premium',
      environment: 'custom',
      baseUrl: 'localhost:8787',
    });
    expect(result.status).toBe('Error');
    expect(result.message).toMatch(/must start with http:\/\/ or https:\/\//);
    expect(server.sandbox.stats()['sandbox-premium'].requests).toBe(0);
  });

  test('an address that does not answer is reported as unreachable, naming the address and the cause', async () => {
    const closed = await startSandbox({ port: 0 });
    await closed.close();
    const result = await test_({ apiKey: 'sandbox-premium', environment: 'custom', baseUrl: closed.url });
    expect(result.status).toBe('Error');
    expect(result.message).toContain(
      `Could not reach the DAPA service at ${closed.url} (fetch failed: ECONNREFUSED)`,
    );
  });
});
