// Sync as the rest of the app sees it (docs/SYNC.md, "Layers"): the service, its status and words,
// the pairing link, who continues a chat, and the device list's type. App code imports sync only
// from here; the modules below are its layers (wire format, crypto, transport, ring, the record
// document, the history, the engine, the service loop), each importing only what is below it.
export { SyncService } from './sync-service';
export { OFF, notSeenWords, syncWords, type SyncPhase, type SyncStatus } from './sync-status';
export { pairLink, pairLinkState, pairLinkWords, qrReach, qrReachWords, readPairLink, type PairLink } from './pair-link';
export { pagePolicy } from './relay-policy';
export { ChatOwner, NO_SYNC, chatPlace, newChatNotice, placeWords, readChatDevices, type ChatDevices } from './chat-owner';
export type { DeviceInfo } from './keys';
