// A device's name from its browser and platform ("Chrome on Linux"), so two paired devices are
// never both "This browser". The user can change it before pairing and after.

interface UaData {
  brands?: Array<{ brand: string }>;
  platform?: string;
  mobile?: boolean;
}

const BROWSERS: Array<[RegExp, string]> = [
  [/Edg\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/SamsungBrowser\//, 'Samsung Internet'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Version\/[\d.]+.*Safari\//, 'Safari'],
];

const PLATFORMS: Array<[RegExp, string]> = [
  [/iPhone/, 'iPhone'],
  [/iPad/, 'iPad'],
  [/Android/, 'Android'],
  [/CrOS/, 'ChromeOS'],
  [/Mac OS X|Macintosh/, 'Mac'],
  [/Windows/, 'Windows'],
  [/Linux/, 'Linux'],
];

/** "Chrome on Linux", "Safari on iPhone"; "A device" when nothing is known. */
export function defaultDeviceName(userAgent: string, data?: UaData): string {
  const brand = data?.brands?.map((b) => b.brand).find((b) => /Chrome|Edge|Opera|Brave|Chromium/.test(b) && !/Not.?A.?Brand/i.test(b));
  const browser = brand?.replace(/^Google /, '').replace(/^Microsoft /, '') ?? BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const platform =
    (data?.platform && data.platform !== 'Unknown' ? data.platform.replace(/^macOS$/, 'Mac') : undefined) ??
    PLATFORMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && platform) return `${browser} on ${platform}`;
  return browser ?? platform ?? 'A device';
}

/** This browser's default name (in the page). */
export function thisDeviceName(): string {
  if (typeof navigator === 'undefined') return 'A device';
  return defaultDeviceName(navigator.userAgent, (navigator as Navigator & { userAgentData?: UaData }).userAgentData);
}
