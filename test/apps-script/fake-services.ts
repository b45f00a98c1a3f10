// Fakes of Google's user lock and PropertiesService for unit tests of the stores that run without the stand-in: a
// store is a plain object, a value over Google's 9 KB is refused with its words, and the lock is always granted.

/** A lock that is always granted and says whether it is held. */
export function fakeLock(): { tryLock: () => boolean; hasLock: () => boolean; releaseLock: () => void } {
  let held = false;
  return {
    tryLock: () => (held = true),
    hasLock: () => held,
    releaseLock: () => void (held = false),
  };
}

/** A Properties store over `data` (changed in place). */
export function fakeProperties(data: Record<string, string>) {
  return {
    getProperty: (key: string) => (key in data ? data[key] : null),
    setProperties: (values: Record<string, string>) => {
      for (const value of Object.values(values))
        if (value.length > 9 * 1024) throw new Error('Argument too large');
      Object.assign(data, values);
    },
    deleteProperty: (key: string) => delete data[key],
    getKeys: () => Object.keys(data),
    getProperties: () => ({ ...data }),
  };
}
