// One spreadsheet of the stand-in's world with what Apps Script keeps per document: its cells (SpreadsheetModel),
// the script's document properties and document cache, its developer metadata, and who may still open it.
import { type CacheRules, CacheStore } from './cache';
import type { SharedClock } from '../../sandbox/virtual';
import { DeveloperMetadataStore } from './developer-metadata';
import { PropertyStore } from './properties';
import { SpreadsheetModel } from './sheet-model';

export class SpreadsheetDocument {
  readonly model: SpreadsheetModel;
  readonly properties = new PropertyStore();
  readonly cache: CacheStore;
  readonly metadata = new DeveloperMetadataStore();
  /** Deleted (trashed and emptied): openById fails for everyone. */
  deleted = false;
  /** Users whose access was taken away: openById fails for them. */
  readonly revoked = new Set<string>();
  /**
   * The user whose spreadsheet this is, when it is not the stand-in's owner (issue 46: each user of a published add-on
   * with a spreadsheet of their own): its custom functions run as this user.
   */
  owner?: string;
  /** Other people the spreadsheet is shared with as editors (Spreadsheet.getEditors adds whoever runs the script). */
  readonly editors = new Set<string>();

  constructor(id: string, name: string, clock: SharedClock, cacheRules?: CacheRules) {
    this.model = new SpreadsheetModel(id, name);
    this.cache = new CacheStore(clock, cacheRules);
  }

  get id(): string {
    return this.model.id;
  }

  get url(): string {
    return `https://docs.google.com/spreadsheets/d/${this.id}/edit`;
  }

  /** The name of this document's lock (LockService.getDocumentLock). */
  get lockName(): string {
    return `document:${this.id}`;
  }

  canOpen(user: string): boolean {
    return !this.deleted && !this.revoked.has(user);
  }
}
