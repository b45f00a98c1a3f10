// Internationalized domain names as the DNS spells them (RFC 3492 Punycode, `xn--` labels), so that `bücher.de`
// and `xn--bcher-kva.de` are one domain, cost one query, and match a record whichever way the server spells it.
// Written out because Apps Script has no `URL` class to do it.
const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1;
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((BASE - T_MIN) * T_MAX) >> 1) {
    d = Math.floor(d / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW));
}

/** A Punycode digit: 0–25 are a–z, 26–35 are 0–9. */
function digit(d: number): string {
  return String.fromCharCode(d < 26 ? 97 + d : 22 + d);
}

/** Encodes one label's code points (RFC 3492, section 6.3). */
function encodeLabel(label: string): string {
  const points = Array.from(label, (c) => c.codePointAt(0) as number);
  const basic = points.filter((p) => p < 0x80);
  let out = String.fromCharCode(...basic);
  let handled = basic.length;
  if (handled > 0) out += '-';
  let n = 0x80;
  let delta = 0;
  let bias = 72;
  while (handled < points.length) {
    const m = Math.min(...points.filter((p) => p >= n));
    delta += (m - n) * (handled + 1);
    n = m;
    for (const p of points) {
      if (p < n) delta += 1;
      if (p !== n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
        if (q < t) break;
        out += digit(t + ((q - t) % (BASE - t)));
        q = Math.floor((q - t) / (BASE - t));
      }
      out += digit(q);
      bias = adapt(delta, handled + 1, handled === basic.length);
      delta = 0;
      handled += 1;
    }
    delta += 1;
    n += 1;
  }
  return out;
}

/** A host with every non-ASCII label as its `xn--` form (after NFC normalization); ASCII labels are kept. */
export function toAsciiHost(host: string): string {
  return host
    .normalize('NFC')
    .split('.')
    .map((label) => (/[\u0080-\uffff]/.test(label) ? 'xn--' + encodeLabel(label) : label))
    .join('.');
}
