// A QR code as SVG drawn from uqr's module matrix: our own path of squares, no SVG or HTML string from
// elsewhere is put into the page.
import { encode } from 'uqr';

export interface QrSquares {
  /** Modules per side, the quiet zone included. */
  size: number;
  /** One SVG path of the dark modules, one unit each. */
  path: string;
}

/** The QR code of `text`: error correction M (a phone's camera at an angle, a glare), the standard 4-module quiet zone. */
export function qrSquares(text: string): QrSquares {
  const { size, data } = encode(text, { ecc: 'M', border: 4 });
  let path = '';
  data.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (dark) path += `M${x} ${y}h1v1h-1z`;
    }),
  );
  return { size, path };
}
