// The one digest for cache keys derived from a secret (the API key): HMAC-SHA-256 keyed with a random salt of this
// user's, kept in the user's properties (USER_PROPERTY.digestSalt) and read with the settings' one bulk read, so a
// cache key tells nothing about the key to anyone who can list the cache, and costs no extra Properties call.
import { hmacSha256, newSalt } from '../platform/gas';
import { rememberedDigest } from './session';
import { locked, readText, writeTexts } from './storage';
import { USER_PROPERTY } from './storage-keys';

/** This user's salt; made (under the user lock, once per user) when there is none yet. */
function salt(): string {
  const known = readText('user', USER_PROPERTY.digestSalt);
  if (known) return known;
  return locked('user', () => {
    const again = readText('user', USER_PROPERTY.digestSalt);
    if (again) return again;
    const made = newSalt();
    writeTexts('user', { [USER_PROPERTY.digestSalt]: made });
    return made;
  });
}

/** The salt to store beside a key being saved, when the user has none yet (one write with the key). */
export function saltToSave(): Record<string, string> {
  return readText('user', USER_PROPERTY.digestSalt) ? {} : { [USER_PROPERTY.digestSalt]: newSalt() };
}

/** A keyed digest of `secret` for `purpose` (web-safe base64): the same for this user, another for anyone else. */
export function keyedDigest(purpose: string, secret: string): string {
  return rememberedDigest(`hmac\n${purpose}\n${secret}`, () => hmacSha256(`${purpose}\n${secret}`, salt()));
}
