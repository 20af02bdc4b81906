// One way to turn anything thrown into words for the user or a log line, for every layer.
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
