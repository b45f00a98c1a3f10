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
  console.log(gas.logs.filter((l) => /^(ACT|VIEW)/.test(l.text)).slice(0, 40).map((l) => l.text).join(' | '));
  console.log(gas.logs.filter((l) => l.text.startsWith('WHY')).slice(0, 60).map((l) => l.text.slice(4)).join(' | '));
  await gas.close(); await sandbox.close();
}
void main();
