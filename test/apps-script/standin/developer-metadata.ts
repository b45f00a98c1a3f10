// Developer metadata on a spreadsheet (Spreadsheet.addDeveloperMetadata, getDeveloperMetadata,
// createDeveloperMetadataFinder) and on a sheet's whole columns (Range.addDeveloperMetadata, getDeveloperMetadata on
// 'B:B'; it moves with its column when columns are inserted): key/value pairs with a visibility, within the size limit
// of the Sheets developer-metadata guide. Custom functions may read it, not change it.
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { DEVELOPER_METADATA_MAX_CHARS } from './limits';

export type MetadataVisibility = 'DOCUMENT' | 'PROJECT';
const VISIBILITIES: MetadataVisibility[] = ['DOCUMENT', 'PROJECT'];

interface MetadataEntry {
  id: number;
  key: string;
  value: string | null;
  visibility: MetadataVisibility;
  /** The column it is on (metadata of a sheet's column); none: the store's spreadsheet or sheet itself. */
  column?: number;
}

/** Stand-in wording (Google's is not documented): a change that would pass the size limit. */
export function metadataTooLargeMessage(
  chars: number,
  where: 'spreadsheet' | 'sheet' = 'spreadsheet',
): string {
  return `Developer metadata too large: a ${where} may hold at most ${DEVELOPER_METADATA_MAX_CHARS} characters of developer metadata (keys and values); this change makes ${chars}.`;
}

/**
 * A range that is not an entire column (or row): Google's guide says metadata goes with "rows, columns, sheets, or a
 * spreadsheet"; the wording is Apps Script's as users report it (not found in Google's reference here).
 */
export const METADATA_RANGE_MESSAGE =
  'Adding developer metadata to arbitrary ranges is not currently supported. Developer metadata may only be added to the top-level spreadsheet, an individual sheet, or an entire row or column.';

/** The developer metadata of one spreadsheet (located on the spreadsheet) or of one sheet (on its columns). */
export class DeveloperMetadataStore {
  readonly entries: MetadataEntry[] = [];
  private nextId = 1;

  constructor(private readonly where: 'spreadsheet' | 'sheet' = 'spreadsheet') {}

  chars(except?: MetadataEntry, extra = 0): number {
    let total = extra;
    for (const e of this.entries) if (e !== except) total += e.key.length + (e.value ?? '').length;
    return total;
  }

  check(chars: number): void {
    if (chars > DEVELOPER_METADATA_MAX_CHARS)
      throw new AppsScriptException(metadataTooLargeMessage(chars, this.where));
  }

  add(key: string, value: string | null, visibility: MetadataVisibility, column?: number): MetadataEntry {
    this.check(this.chars(undefined, key.length + (value ?? '').length));
    // Ids are positive and spreadsheet-scoped; sequential here so that a run repeats exactly.
    const entry: MetadataEntry = { id: this.nextId++, key, value, visibility };
    if (column !== undefined) entry.column = column;
    this.entries.push(entry);
    return entry;
  }

  /** Columns inserted after `column`: the metadata of the columns right of it moves with them. */
  shiftColumns(column: number, count: number): void {
    for (const e of this.entries) if (e.column !== undefined && e.column > column) e.column += count;
  }

  /** Columns deleted: their metadata goes with them, the metadata right of them moves left. */
  removeColumns(column: number, count: number): void {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const c = this.entries[i].column;
      if (c === undefined) continue;
      if (c >= column && c < column + count) this.entries.splice(i, 1);
      else if (c >= column + count) this.entries[i].column = c - count;
    }
  }

  /** A snapshot for tests: key, value, visibility of each entry. */
  snapshot(): Array<{ id: number; key: string; value: string | null; visibility: MetadataVisibility }> {
    return this.entries.map((e) => ({ ...e }));
  }
}

function keyOf(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw new AppsScriptException('Invalid argument: key');
  return key;
}

function visibilityOf(visibility: unknown): MetadataVisibility {
  const v = String(visibility) as MetadataVisibility;
  if (!VISIBILITIES.includes(v)) throw new AppsScriptException('Invalid argument: visibility');
  return v;
}

export class DeveloperMetadata extends AppsScriptObject {
  readonly kind = 'DeveloperMetadata';

  constructor(
    private readonly store: DeveloperMetadataStore,
    private readonly entry: MetadataEntry,
    private readonly execution: Execution,
  ) {
    super();
  }

  private _write(method: string): void {
    if (this.execution.isCustomFunction) throw noPermission(method);
    if (!this.store.entries.includes(this.entry))
      throw new AppsScriptException('The developer metadata was removed.');
  }

  getId(): number {
    return this.entry.id;
  }
  getKey(): string {
    return this.entry.key;
  }
  getValue(): string | null {
    return this.entry.value;
  }
  getVisibility(): string {
    return this.entry.visibility;
  }
  setKey(key: unknown): this {
    this._write('setKey');
    const k = keyOf(key);
    this.store.check(this.store.chars(this.entry, k.length + (this.entry.value ?? '').length));
    this.entry.key = k;
    return this;
  }
  setValue(value: unknown): this {
    this._write('setValue');
    const v = value === null || value === undefined ? null : String(value);
    this.store.check(this.store.chars(this.entry, this.entry.key.length + (v ?? '').length));
    this.entry.value = v;
    return this;
  }
  setVisibility(visibility: unknown): this {
    this._write('setVisibility');
    this.entry.visibility = visibilityOf(visibility);
    return this;
  }
  remove(): void {
    this._write('remove');
    const i = this.store.entries.indexOf(this.entry);
    if (i >= 0) this.store.entries.splice(i, 1);
  }
}

export class DeveloperMetadataFinder extends AppsScriptObject {
  readonly kind = 'DeveloperMetadataFinder';
  private key?: string;
  private value?: string;
  private id?: number;
  private visibility?: MetadataVisibility;

  private readonly stores: DeveloperMetadataStore[];

  /** One store, or several (a spreadsheet's finder: the spreadsheet's own and every sheet's columns). */
  constructor(
    stores: DeveloperMetadataStore | DeveloperMetadataStore[],
    private readonly execution: Execution,
  ) {
    super();
    this.stores = Array.isArray(stores) ? stores : [stores];
  }

  withKey(key: unknown): this {
    this.key = keyOf(key);
    return this;
  }
  withValue(value: unknown): this {
    this.value = String(value);
    return this;
  }
  withId(id: unknown): this {
    this.id = Number(id);
    return this;
  }
  withVisibility(visibility: unknown): this {
    this.visibility = visibilityOf(visibility);
    return this;
  }
  find(): DeveloperMetadata[] {
    return this.stores.flatMap((store) =>
      store.entries
        .filter(
          (e) =>
            (this.key === undefined || e.key === this.key) &&
            (this.value === undefined || e.value === this.value) &&
            (this.id === undefined || e.id === this.id) &&
            (this.visibility === undefined || e.visibility === this.visibility),
        )
        .map((e) => new DeveloperMetadata(store, e, this.execution)),
    );
  }
}

/** Spreadsheet.addDeveloperMetadata(key), (key, visibility), (key, value), (key, value, visibility); a whole
 *  column's Range.addDeveloperMetadata with the same arguments (`column`). */
export function addDeveloperMetadata(
  store: DeveloperMetadataStore,
  execution: Execution,
  args: unknown[],
  column?: number,
): DeveloperMetadata {
  if (execution.isCustomFunction) throw noPermission('addDeveloperMetadata');
  const key = keyOf(args[0]);
  let value: string | null = null;
  let visibility: MetadataVisibility = 'DOCUMENT';
  if (args.length === 2) {
    if (VISIBILITIES.includes(args[1] as MetadataVisibility)) visibility = args[1] as MetadataVisibility;
    else value = String(args[1]);
  } else if (args.length >= 3) {
    value = args[1] === null || args[1] === undefined ? null : String(args[1]);
    visibility = visibilityOf(args[2]);
  }
  return new DeveloperMetadata(store, store.add(key, value, visibility, column), execution);
}
