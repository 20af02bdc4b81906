// A model server's address (loopback only, so nothing leaves the device) and its failures in words
// that say what to do. Split from local-server.ts, which re-exports all of it.

export type ServerErrorKind =
  /** Nothing answers at that address. */
  | 'down'
  /** Something answers, but the browser may not read it: the server does not allow this origin. */
  | 'origin-refused'
  | 'timeout'
  /** The server answered with an HTTP error. */
  | 'http'
  /** The answer was not what the API describes. */
  | 'bad-response'
  /** The address is not on this computer, or not a URL. */
  | 'not-local'
  /** The answer went past the size limit (a model writing without end). */
  | 'too-long'
  | 'cancelled';

/** A failure of the local server, with a message that says what to do. */
export class LocalServerError extends Error {
  override readonly name = 'LocalServerError';
  constructor(
    readonly kind: ServerErrorKind,
    message: string,
    readonly detail = '',
    readonly status?: number,
  ) {
    super(message);
  }
}

export function isLocalServerError(e: unknown): e is LocalServerError {
  return e instanceof LocalServerError;
}

/** The loopback hosts the app may talk to (and the CSP allows). */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost'] as const;
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:11434';

/**
 * The server's base URL without a trailing slash or "/v1", or a LocalServerError when it is not
 * an http URL on this computer.
 */
export function normaliseServerUrl(input: string, options: { allowRemote?: boolean } = {}): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new LocalServerError('not-local', `"${input.trim()}" is not an address. Write it like ${DEFAULT_SERVER_URL}.`);
  }
  if (options.allowRemote) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new LocalServerError('not-local', 'The address must start with http:// or https://.');
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
  }
  if (!(LOOPBACK_HOSTS as readonly string[]).includes(url.hostname)) {
    throw new LocalServerError(
      'not-local',
      `Only a server on this computer can be used (${LOOPBACK_HOSTS.join(' or ')}): nothing you write may leave this device.`,
    );
  }
  // Loopback traffic never leaves the machine, so plain http is what local servers speak.
  if (url.protocol !== 'http:') {
    throw new LocalServerError('not-local', `The address must start with http:// (like ${DEFAULT_SERVER_URL}).`);
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.protocol}//${url.host}${path}`;
}
