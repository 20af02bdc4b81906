// "Remember that …": the user's own words become a memory written as every memory is, to the user
// in the second person ("my sister is called Ana" -> "Your sister is called Ana."), with no model
// call. The user speaks of Tealeaf as "you": that becomes "Tealeaf" first, then "I" becomes "you".
import type { MemoryKind } from '../types';
import { instructionReading } from './instruction-words';

export interface RememberedFact {
  kind: MemoryKind;
  text: string;
  subject: string;
  /** For a note: why it is kept. */
  context?: string;
}

/** Said of Tealeaf ("you") -> "Tealeaf"; said of the user ("I") -> "you". Longest forms first. */
const TEALEAF: Array<[RegExp, string]> = [
  [/\byou are\b/gi, 'Tealeaf is'],
  [/\byou're\b/gi, 'Tealeaf is'],
  [/\byou were\b/gi, 'Tealeaf was'],
  [/\byou've\b/gi, 'Tealeaf has'],
  [/\byou'll\b/gi, 'Tealeaf will'],
  [/\byours\b/gi, "Tealeaf's"],
  [/\byour\b/gi, "Tealeaf's"],
  [/\byourself\b/gi, 'Tealeaf'],
  [/\byou\b/gi, 'Tealeaf'],
];
const USER: Array<[RegExp, string]> = [
  [/\bI am\b/gi, 'you are'],
  [/\bI'm\b/gi, 'you are'],
  [/\bI was\b/gi, 'you were'],
  [/\bI've\b/gi, 'you have'],
  [/\bI'll\b/gi, 'you will'],
  [/\bI'd\b/gi, 'you would'],
  [/\bI\b/gi, 'you'],
  [/\bmyself\b/gi, 'yourself'],
  [/\bmine\b/gi, 'yours'],
  [/\bmy\b/gi, 'your'],
  [/\bme\b/gi, 'you'],
];
const FIRST_PERSON = /\b(I|I'm|I've|I'll|I'd|me|my|mine|myself)\b/i;
// When it happens: then it is an event, not a lasting trait.
const WHEN =
  /\b(today|tonight|tomorrow|yesterday|next (week|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|on (monday|tuesday|wednesday|thursday|friday|saturday|sunday)|this (morning|afternoon|evening|weekend|week)|at \d{1,2}(:\d\d)?\s*(am|pm)?|appointment|meeting)\b/i;

function rewrite(text: string, table: Array<[RegExp, string]>): string {
  // One pass per form, each over text no earlier form produced (placeholders keep them apart).
  const done: string[] = [];
  let s = text;
  for (const [re, to] of table) {
    s = s.replace(re, () => {
      done.push(to);
      return `\uE000${done.length - 1}\uE001`;
    });
  }
  return s.replace(/\uE000(\d+)\uE001/g, (_, i: string) => done[Number(i)]!);
}

/** A sentence: a capital first letter and a full stop (unless it ends with its own mark). */
function sentence(s: string): string {
  const t = s.trim();
  const capital = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?…)"”’]$/u.test(capital) ? capital : `${capital}.`;
}

/** Whether the words are, by what they are about, a standing instruction to Tealeaf (instruction-words.ts). */
export function isInstruction(words: string): boolean {
  return instructionReading(words) === 'instruction';
}

/** The instruction as kept: the user's own words to Tealeaf, as a sentence. */
export function instructionFact(words: string): RememberedFact {
  return { kind: 'instruction', text: sentence(words.replace(/^please\s+/i, '')), subject: 'user' };
}

/**
 * The memory the words make: an instruction to Tealeaf (by default as the words read; the caller
 * may have asked the model, or the person chose) a standing instruction, kept in the user's words;
 * about the user (they speak of themselves) a trait, or an event when it says when; anything else
 * a note, knowledge to keep, as written.
 */
export function rememberedFact(words: string, asInstruction: boolean = isInstruction(words)): RememberedFact {
  if (asInstruction) return instructionFact(words);
  const aboutUser = FIRST_PERSON.test(words);
  const text = sentence(rewrite(rewrite(words, TEALEAF), USER));
  if (!aboutUser) return { kind: 'note', text, subject: 'user', context: 'You asked Tealeaf to remember this.' };
  return { kind: WHEN.test(words) ? 'event' : 'user-trait', text, subject: 'user' };
}
