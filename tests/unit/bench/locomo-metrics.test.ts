import { describe, expect, it } from 'vitest';
import { answerHit, normaliseAnswerText, shortAnswerForms, Tally } from '../../../bench/lib/locomo-metrics';

describe('answer hit (bench:locomo)', () => {
  it('normalises case, punctuation and articles', () => {
    expect(normaliseAnswerText('The  Sunday before 25 May, 2023!')).toBe('sunday before 25 may 2023');
    expect(normaliseAnswerText("Melanie's kids")).toBe('melanie kids');
    expect(normaliseAnswerText('an apple, a pear')).toBe('apple pear');
  });

  it('scores only answers of at most five words after normalising', () => {
    expect(shortAnswerForms('The week before 9 June 2023')).toEqual(['week before 9 june 2023']);
    expect(shortAnswerForms('Likely no; though she likes reading, she wants to be a counselor')).toBeUndefined();
    expect(shortAnswerForms(undefined)).toBeUndefined();
    expect(shortAnswerForms('  ...  ')).toBeUndefined();
  });

  it('a calendar date also matches the ISO date the prompt writes', () => {
    expect(shortAnswerForms('7 May 2023')).toEqual(['7 may 2023', '2023 05 07']);
    expect(shortAnswerForms('19 January, 2023')).toEqual(['19 january 2023', '2023 01 19']);
    expect(shortAnswerForms('May 7, 2023')).toEqual(['may 7 2023', '2023 05 07']);
    expect(shortAnswerForms('June 2023')).toEqual(['june 2023']);
    expect(answerHit(shortAnswerForms('7 May 2023')!, '- 2023-05-07: Caroline went to a support group.')).toBe(true);
    expect(answerHit(shortAnswerForms('7 May 2023')!, '- 2023-05-08: Caroline went to a support group.')).toBe(false);
  });

  it('needs the answer as whole words of the remembered text', () => {
    const forms = shortAnswerForms('Pottery')!;
    expect(answerHit(forms, '- 2023-07-02: Melanie: I signed up for a pottery class!')).toBe(true);
    expect(answerHit(forms, 'potteryclass')).toBe(false);
    expect(answerHit(shortAnswerForms('2022')!, 'in 20222')).toBe(false);
    expect(answerHit(shortAnswerForms('Psychology, counseling')!, 'psychology and counseling')).toBe(false);
  });
});

describe('Tally', () => {
  it('averages per key with counts, rounded to 3 decimals', () => {
    const t = new Tally();
    t.add('a', 1);
    t.add('a', 0);
    t.add('a', 0);
    expect(t.mean('a')).toBe(0.333);
    expect(t.count('a')).toBe(3);
    expect(t.mean('b')).toBeUndefined();
  });
});
