// Takes a pairing link (src/services/sync/pair-link.ts) out of the address bar as the page opens or
// its hash changes: the code must not stay in the address bar or the history, so the entry is
// replaced with plain #/settings at once. What it carried goes to the Settings form; nothing is sent.
import { pagePolicy, readPairLink, type PairLink } from '../../services/sync';

export function takePairLink(): PairLink | null {
  const link = readPairLink(location.hash, pagePolicy());
  if (link) history.replaceState(history.state, '', `${location.pathname}${location.search}#/settings`);
  return link;
}
