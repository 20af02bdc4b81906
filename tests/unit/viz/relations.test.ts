import { describe, expect, it } from 'vitest';
import { RELATIONS } from '../../../src/memory/types';
import { contrastRatio, kindStyles, relationStyles } from '../../../src/viz/relations';

describe('styles', () => {
  it('every relation and kind colour has at least 3:1 contrast on white', () => {
    for (const s of relationStyles()) expect(contrastRatio(s.colour, '#ffffff')).toBeGreaterThanOrEqual(3);
    for (const s of kindStyles()) expect(contrastRatio(s.fill, '#ffffff')).toBeGreaterThanOrEqual(3);
  });

  it('relations are distinguishable without colour (unique colour and dash pairs)', () => {
    const styles = relationStyles();
    expect(styles.map((s) => s.relation)).toEqual([...RELATIONS]);
    expect(new Set(styles.map((s) => s.colour)).size).toBe(styles.length);
    expect(new Set(styles.map((s) => `${s.dash}|${s.width}`)).size).toBeGreaterThanOrEqual(5);
  });
});
