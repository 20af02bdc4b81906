// Which relays this build may talk to: the CSP's connect-src (src/csp.js) decides, read from the
// page's own policy so the answer is the browser's, not a copy of it. Loopback (any port) is always
// in it; an https relay elsewhere only when the build named it (TEALEAF_SYNC_RELAYS, README).

/** The connect-src sources of a policy text. */
export function connectSources(policy: string): string[] {
  const d = policy
    .split(';')
    .map((p) => p.trim().split(/\s+/))
    .find((p) => p[0] === 'connect-src');
  return d ? d.slice(1) : [];
}

/** Whether `url` matches one CSP source expression (scheme, host with `*.` wildcard, port or `*`). */
export function sourceAllows(source: string, url: URL): boolean {
  const m = /^(https?):\/\/(\*\.)?([^:/]+)(?::(\*|\d+))?\/?$/.exec(source);
  if (!m) return false;
  const [, scheme, wild, host, port] = m;
  if (url.protocol !== `${scheme}:`) return false;
  const hostOk = wild ? url.hostname.endsWith(`.${host}`) : url.hostname === host;
  const defaultPort = scheme === 'https' ? '443' : '80';
  const urlPort = url.port || defaultPort;
  const portOk = port === '*' || (port ?? defaultPort) === urlPort;
  return hostOk && portOk;
}

/** Plain words for why a relay URL cannot be used here, or undefined when it can. */
export function relayRefusal(raw: string, policy: string | undefined): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'That is not a web address. A relay looks like http://127.0.0.1:8787 or https://relay.example.org.';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'A relay address starts with http:// or https://.';
  if (url.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    return 'Only a relay on this computer may use http://; one elsewhere needs https://.';
  if (policy === undefined) return undefined;
  if (!connectSources(policy).some((s) => sourceAllows(s, url)))
    return `This build of Tealeaf may not connect to ${url.origin}: its security policy allows relays on this computer and those named when it was built (README, "Sync").`;
  return undefined;
}

/** The page's own policy (the meta tag the build wrote), if any. */
export function pagePolicy(): string | undefined {
  if (typeof document === 'undefined') return undefined;
  return document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? undefined;
}

/** Throws the refusal's words when this page may not use `relayUrl` (before any request to it). */
export function assertRelayAllowed(relayUrl: string): void {
  const refusal = relayRefusal(relayUrl, pagePolicy());
  if (refusal) throw new Error(refusal);
}
