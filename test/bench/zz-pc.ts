import { DEFAULT_CONFIG } from '../sandbox/handler';
import { loadAppsScript, uniformLateness } from '../apps-script/harness';
import { domains, sheetsAddress } from '../apps-script/support';
import { startVirtualSandbox } from '../sandbox/virtual';
async function main() {
  const n = Number(process.argv[2] ?? 1000);
  const sandbox = await startVirtualSandbox({ keys: DEFAULT_CONFIG.keys });
  const gas = await loadAppsScript({ clock: 'virtual', virtualLatencyMs: 400, serviceCallMs: 15, customFunctionsAtOnce: 30, triggerDelayMs: uniformLateness(7) });
  sandbox.useClock(gas.clock);
  await gas.run('saveSettings', { apiKey: 'sandbox-basic', environment: 'custom', baseUrl: sheetsAddress(sandbox.url) });
  gas.sheet.addSheet('Cells', Math.max(1000, n + 1), 26);
  gas.sheet.activate('Cells');
  gas.sheet.setValues(`A2:A${n + 1}`, domains(n, 'cell').map((d) => [d]));
  if (process.argv[3] === 'bg') await gas.run('startBackground');
  for (let r = 3; r <= n + 1; r++) gas.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
  const t0 = gas.clock.now();
  const r0 = Date.now();
  await gas.edit('B2', '=DAPA(A2)');
  const vals = gas.sheet.getValues(`B2:B${n + 1}`).map((r) => r[0]);
  console.log('first recalc', (gas.clock.now() - t0) / 1000, 's virtual', (Date.now() - r0) / 1000, 's real; filled', vals.filter((v) => typeof v === 'number').length, 'errors', vals.filter((v) => String(v).startsWith('#')).length);
  const ex = gas.executions.filter((e) => e.kind === 'custom-function');
  const el = ex.map((e) => e.elapsedMs ?? 0).sort((a, b) => a - b);
  console.log('executions', ex.length, 'elapsed p50', el[Math.floor(el.length / 2)], 'p90', el[Math.floor(el.length * 0.9)], 'max', el[el.length - 1]);
  const st = sandbox.sandbox.stats()['sandbox-basic'];
  console.log('requests', st?.requests, 'billed', st?.billed, JSON.stringify(st?.responsesByStatus));
  const whys = new Map<string, number>();
  for (const l of gas.logs) if (l.text.startsWith('WHY')) { const k = l.text.split(' ').slice(1, 2).join(' '); whys.set(k, (whys.get(k) ?? 0) + 1); }
  console.log([...whys]);
  const w = (gas as any).world;
  const pc = () => [...w.userProperties.values()].reduce((a: number, st: any) => a + st.calls, 0) + [...w.documents.values()].reduce((a: number, d: any) => a + (d.properties?.calls ?? 0), 0);
  console.log('properties calls after first recalc', pc());
  (globalThis as any).pc = pc;
  if (process.argv[3] === 'bg') {
    const t1 = gas.clock.now();
    const filledNow = () => gas.sheet.getValues(`B2:B${n + 1}`).filter((r) => typeof r[0] === 'number').length;
    let lastLog = t1;
    await gas.runTriggers({ until: t0 + 3 * 3600_000, stop: () => {
      if (gas.clock.now() - lastLog > 15 * 60_000) { lastLog = gas.clock.now(); console.log('t', ((gas.clock.now() - t0) / 60000).toFixed(1), 'min filled', filledNow(), 'billed', sandbox.sandbox.stats()['sandbox-basic']?.billed); }
      return filledNow() === n; } });
    console.log('done at', ((gas.clock.now() - t0) / 60000).toFixed(1), 'min; filled', filledNow(), 'refused triggers', gas.refusedTriggers.length);
    const tr = gas.executions.filter((e) => e.kind === 'trigger');
    const tot = tr.reduce((a, e) => a + (e.elapsedMs ?? 0), 0);
    console.log('trigger runs', tr.length, 'runtime min', (tot / 60000).toFixed(1), 'errors', tr.filter((e) => e.status !== 'ok').map((e) => e.error).slice(0, 3));
    const cf = gas.executions.filter((e) => e.kind === 'custom-function');
    console.log('custom fn runs', cf.length, 'killed', cf.filter((e) => e.status === 'killed').length);
    const st = sandbox.sandbox.stats()['sandbox-basic'];
    console.log('requests', st?.requests, 'billed', st?.billed, 'twice', Object.values(st?.billedByDomain ?? {}).filter((x) => x > 1).length);
    const longest = [...tr].sort((a, b) => (b.elapsedMs ?? 0) - (a.elapsedMs ?? 0)).slice(0, 3).map((e) => e.elapsedMs);
    console.log('longest trigger runs', longest);
    console.log('properties calls', (globalThis as any).pc());
  }
  await gas.close(); await sandbox.close();
}
void main();
