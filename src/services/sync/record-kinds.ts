// The kinds of synced record, each a map of the record document (record-doc.ts), and the keys a
// change touched: below the document and its gate (record-gate.ts), which both name them.

export const KINDS = ['sessions', 'turns', 'memories', 'edges', 'segments', 'tombstones'] as const;
export type Kind = (typeof KINDS)[number];

/** The keys of each map that a transaction changed. */
export type Touched = Map<Kind, Set<string>>;
