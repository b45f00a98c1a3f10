// The part of zod/mini that shared/wire.ts uses, for the Apps Script bundle only: apps-script/build.mjs resolves
// 'zod/mini' here, so the wire schemas stay zod schemas in the source (types by z.infer, the n8n node and the tests
// parse with zod itself) while the script Apps Script loads on every =DAPA call is 16 KB smaller. It must answer
// exactly as zod does: test/apps-script/zod-mini.test.ts parses random input with both and compares.

type Result = { ok: true; value: unknown } | { ok: false };

const FAIL: Result = { ok: false };

export class Schema {
  constructor(
    readonly run: (input: unknown) => Result,
    /** Whether an absent object key is accepted (and left out of the output). */
    readonly optionalKey = false,
  ) {}

  safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: Error } {
    const result = this.run(input);
    return result.ok
      ? { success: true, data: result.value }
      : { success: false, error: new Error('Invalid input') };
  }
}

const ok = (value: unknown): Result => ({ ok: true, value });
const when = (test: (input: unknown) => boolean) => new Schema((input) => (test(input) ? ok(input) : FAIL));

export const string = () => when((input) => typeof input === 'string');
export const number = () => when((input) => typeof input === 'number' && Number.isFinite(input));
export const unknown = () => when(() => true);

export const optional = (inner: Schema) =>
  new Schema((input) => (input === undefined ? ok(undefined) : inner.run(input)), true);

export const nullable = (inner: Schema) =>
  new Schema((input) => (input === null ? ok(null) : inner.run(input)), inner.optionalKey);

export const union = (options: Schema[]) =>
  new Schema((input) => options.map((o) => o.run(input)).find((r) => r.ok) ?? FAIL);

export const array = (item: Schema) =>
  new Schema((input) => {
    if (!Array.isArray(input)) return FAIL;
    const out: unknown[] = [];
    for (const element of input) {
      const r = item.run(element);
      if (!r.ok) return FAIL;
      out.push(r.value);
    }
    return ok(out);
  });

/** Known keys only, in the shape's order; an absent optional key stays absent. */
export const object = (shape: Record<string, Schema>) =>
  new Schema((input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return FAIL;
    const source = input as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(shape)) {
      if (!(key in source) && schema.optionalKey) continue;
      const r = schema.run(source[key]);
      if (!r.ok) return FAIL;
      out[key] = r.value;
    }
    return ok(out);
  });
