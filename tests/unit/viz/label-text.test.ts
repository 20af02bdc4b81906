// A label is the whole text or whole words of it, never a word cut short, and it drops the lead
// ("You said:") that every memory of a chat shares.
import { describe, expect, it } from 'vitest';
import { cachedMeasure, estimateWidth, fitLabel, labelCore, labelForms } from '../../../src/viz/label-text';

const words = (s: string) => new Set(s.split(/[\s,.;:!?—]+/).filter(Boolean));

describe('labelForms', () => {
  it('starts with the text without its lead, then whole-word titles', () => {
    const forms = labelForms("You said: I'm thinking about adopting a cat named Miso from the shelter");
    // The lead says nothing that tells one label from another: never shown.
    expect(forms[0]).toBe("I'm thinking about adopting a cat named Miso from the shelter");
    expect(forms.some((f) => f.startsWith('You said'))).toBe(false);
    expect(forms).toContain("I'm thinking about adopting a cat named Miso…");
    // Never on a dangling word, never a word cut short, never under three words.
    const full = words(forms[0]);
    for (const f of forms.slice(1)) {
      expect(f.endsWith('…')).toBe(true);
      const ws = f.slice(0, -1).split(' ');
      expect(ws.length).toBeGreaterThanOrEqual(3);
      for (const w of ws) expect(full.has(w)).toBe(true);
      expect(['a', 'the', 'about', 'from']).not.toContain(ws.at(-1));
    }
    // Longest first.
    for (let i = 1; i < forms.length; i++) expect(forms[i].length).toBeLessThanOrEqual(forms[i - 1].length);
  });

  it('offers the first clause of a longer text', () => {
    expect(labelForms('You said: They offered 66k plus relocation. I have to decide by Friday')).toContain(
      'They offered 66k plus relocation',
    );
  });

  it('leaves a text with no lead as it is, and a short one whole only', () => {
    expect(labelCore('Loves hiking in the Alps')).toBe('Loves hiking in the Alps');
    expect(labelForms('Likes tea')).toEqual(['Likes tea']);
    expect(labelForms('  ')).toEqual([]);
  });
});

describe('fitLabel', () => {
  const m = estimateWidth(6);
  it('takes the longest form that fits, or none', () => {
    const forms = labelForms('You said: I am learning to play the cello with Mrs Okafor');
    expect(fitLabel(forms, 1000, m)).toBe(forms[0]);
    const mid = fitLabel(forms, 150, m)!;
    expect(m(mid)).toBeLessThanOrEqual(150);
    expect(mid.startsWith('I am learning')).toBe(true);
    expect(fitLabel(forms, 30, m)).toBeNull();
  });

  it('measures each string once', () => {
    let calls = 0;
    const measure = cachedMeasure((s) => {
      calls++;
      return s.length;
    });
    measure('abc');
    measure('abc');
    expect(calls).toBe(1);
  });
});
