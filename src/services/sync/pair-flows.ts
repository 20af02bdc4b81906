// The configs pairing makes (docs/SYNC.md, "Pairing"): the first device's, with a new key and a
// ring of one; a joining device's, from the device showing the code; and what the showing device
// hands over.
import { toBase64Url } from './bytes';
import { generateDevice, generateSyncKey } from './keys';
import type { PairingPayload } from './pairing';
import type { DeviceInfo } from './keys';
import { newPairingCode } from './pairing';
import { joinWithCode, offerPairing } from './pairing-session';
import { RelayClient } from './relay-client';
import { assertRelayAllowed } from './relay-policy';
import type { SyncConfig } from './sync-config';

/** The first device: a new key, and a ring of this device alone. */
export async function firstDevice(relayUrl: string, name: string): Promise<SyncConfig> {
  assertRelayAllowed(relayUrl);
  const key = await generateSyncKey();
  const device = await generateDevice(name);
  return { relayUrl, device, key: { raw: key.raw, createdAt: key.createdAt }, devices: [device.info] };
}

/** A new device: the key ring from the device showing `code`. */
export async function joinedDevice(
  relayUrl: string,
  code: string,
  name: string,
  fetchFn?: typeof fetch,
  signal?: AbortSignal,
): Promise<SyncConfig> {
  assertRelayAllowed(relayUrl);
  const got = await joinWithCode(new RelayClient(relayUrl, fetchFn), code.trim().toUpperCase(), name, { signal });
  return { relayUrl, device: got.device, key: { raw: got.key.raw, createdAt: got.key.createdAt }, devices: got.devices };
}

/** What the device showing a code hands the new one: the key, the ring, the relay, and that it added it. */
export function payloadFor(config: SyncConfig): PairingPayload {
  return {
    key: toBase64Url(config.key.raw),
    keyCreatedAt: config.key.createdAt,
    devices: config.devices,
    relayUrl: config.relayUrl,
    addedBy: config.device.info.id,
  };
}

/** The device showing a code: its offer is in the mailbox when this resolves (show the code then); `joined` is the new device. */
export async function showCode(
  config: SyncConfig,
  signal: AbortSignal,
  fetchFn?: typeof fetch,
): Promise<{ code: string; joined: Promise<DeviceInfo> }> {
  const code = newPairingCode();
  const { joined } = await offerPairing(new RelayClient(config.relayUrl, fetchFn), code, payloadFor(config), { signal });
  return { code, joined };
}

export interface CodeHost {
  config(): SyncConfig | undefined;
  fetch?: typeof fetch;
  /** The code shown now (undefined: none), or the pairing's failure in words. */
  show(code: string | undefined, error?: string): void;
  /** The ring changed here: told, signed, to every device, then kept. */
  announce(config: SyncConfig, s: { type: 'added'; device: DeviceInfo }): Promise<void>;
}

/** The one code this device shows at a time: shown once its offer is on the relay, until used, cancelled or expired. */
export class CodeShown {
  private ctl?: AbortController;

  constructor(private readonly host: CodeHost) {}

  async offer(): Promise<string> {
    const config = this.host.config();
    if (!config) throw new Error('Turn sync on first.');
    this.ctl?.abort();
    const ctl = (this.ctl = new AbortController());
    const { code, joined } = await showCode(config, ctl.signal, this.host.fetch);
    const mine = () => this.ctl === ctl && !ctl.signal.aborted;
    if (mine()) this.host.show(code);
    joined.then(
      async (info) => {
        const added = { ...info, addedBy: config.device.info.id };
        // Told to every device of the ring, signed: none leaves it out of a later key.
        const now = this.host.config()!;
        try {
          await this.host.announce(
            { ...now, devices: [...now.devices.filter((d) => d.id !== added.id), added] },
            { type: 'added', device: added },
          );
        } catch (e) {
          // Not written (a full disk, the tab closing): said where the code was shown, not left unhandled.
          if (mine()) this.host.show(undefined, (e as Error).message);
          return;
        }
        if (mine()) this.host.show(undefined);
      },
      (e: unknown) => {
        if (!ctl.signal.aborted) this.host.show(undefined, (e as Error).message);
      },
    );
    return code;
  }

  /** Stops showing the code: a device typing it is told so; an answer the relay took before stands (both paired). */
  cancel(): void {
    this.ctl?.abort();
    this.host.show(undefined);
  }
}
