import type { KeyCipher } from '@aigw/common';
import type { ChannelRepository } from '../data/channel-repository.ts';

/**
 * After a rotation of CHANNEL_KEY_SECRET (the old secret in CHANNEL_KEY_SECRET_PREVIOUS): seals
 * every channel key sealed with an earlier secret again with the current one. A key edited in the
 * meantime is left as the edit wrote it. Idempotent; returns how many keys were sealed again.
 */
export async function resealChannelKeys(channels: ChannelRepository, cipher: KeyCipher): Promise<number> {
  let n = 0;
  for (const doc of await channels.all()) {
    if (!doc.key_enc || !cipher.stale(doc.key_enc)) continue;
    if (await channels.replaceKeyEnc(doc._id, doc.key_enc, cipher.encrypt(cipher.decrypt(doc.key_enc)))) n++;
  }
  return n;
}
