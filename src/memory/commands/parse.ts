// Memory commands said in the chat: "remember that …", "forget …", "what do you
// remember about …". Only explicit wordings count, so none needs a model call to be understood; a
// question to the model ("do you remember the day we met?") or a remark ("I can't remember that
// film") is no command. A command ends with no question mark: "remember that film?" asks.
import { instructionReading } from './instruction-words';

/** What a message asks of the memory, when it is a command. */
export type MemoryCommand =
  | {
      kind: 'remember';
      /** the user's words to keep, as written */ fact: string;
      /** "remember to …": what follows is a standing instruction, whatever its first word */
      instruction?: boolean;
    }
  | { kind: 'forget'; about: string; /** "forget everything about me": the persona bank */ me: boolean }
  | { kind: 'recall'; about: string; /** "what do you remember about me?": the persona bank */ me: boolean };

/** "that" as a demonstrative before these ("remember that film we saw") points at a thing, not a fact. */
const DEMONSTRATIVE =
  /^(film|movie|book|song|album|day|night|morning|evening|time|place|restaurant|trip|holiday|show|series|game|match|story|guy|girl|man|woman|one|thing|moment|joke|episode|photo|picture|video|article|recipe|conversation|chat|party|concert|summer|winter|weekend|year)\b/i;

/** Words that point at the conversation, not at the memory ("forget what I said", "forget the last answer"). */
const CONVERSATION = new Set(
  (
    'it that this those these them everything anything something all whatever what i said say saying told tell wrote ' +
    'write typed asked ask mentioned just last previous earlier above before message messages question questions answer ' +
    'answers reply replies response responses instruction instructions prompt prompts conversation chat the a an my your ' +
    'you me about never mind please now again one ones part bit rest so far try and start over instead'
  ).split(' '),
);

const ME = /^(me|myself|about me|me and my life)$/i;

/** Leading courtesy and address ("Tealeaf, please …"), and the end's punctuation. */
function bare(text: string): { body: string; question: boolean } {
  let s = text.replace(/\s+/g, ' ').trim();
  const question = /\?\s*$/.test(s);
  s = s.replace(/^(hey |hi |ok |okay )?tealeaf[,:!]?\s+/i, '');
  s = s.replace(/[\s.!?…]+$/u, '');
  s = s.replace(/,?\s*please$/i, '');
  return { body: s, question };
}

function cleanObject(s: string): string {
  return s
    .replace(/^["'“‘]+|["'”’]+$/gu, '')
    .replace(/[\s.!?…]+$/u, '')
    .trim();
}

/** The command a message is, or undefined: a normal message for the model. */
export function parseMemoryCommand(text: string): MemoryCommand | undefined {
  // One line: a longer message that starts so is a conversation, not a command.
  if (text.trim().includes('\n')) return undefined;
  const { body, question } = bare(text);
  if (!body || body.length > 2000) return undefined;
  return remember(body, question) ?? forget(body, question) ?? recall(body);
}

function remember(body: string, question: boolean): MemoryCommand | undefined {
  if (question) return undefined;
  // "remember that X", "remember: X", "remember this: X", "please remember (that) X".
  const m =
    /^(?:please )?remember(?: this)?\s*:\s*(.+)$/i.exec(body) ??
    /^(?:please )?remember that (.+)$/i.exec(body) ??
    /^please remember (?!to\b)(.+)$/i.exec(body);
  if (!m) return instructionToRemember(body);
  const fact = cleanObject(m[1]!);
  // "remember that film we watched": a thing to recall together, not a fact to keep.
  if (/^(?:please )?remember that /i.test(body) && DEMONSTRATIVE.test(fact)) return undefined;
  if (fact.split(' ').length < 2) return undefined;
  return { kind: 'remember', fact };
}

/**
 * "(please) remember to keep your answers short": a standing instruction, the words after "to",
 * unless they read as a plain fact ("remember to drink water" is a remark, no command).
 */
function instructionToRemember(body: string): MemoryCommand | undefined {
  const m = /^(?:please )?remember to (.+)$/i.exec(body);
  if (!m) return undefined;
  const fact = cleanObject(m[1]!);
  // "Remember to" already speaks to Tealeaf: anything but a plain fact ("drink water") counts.
  if (fact.split(' ').length < 2 || instructionReading(fact) === 'fact') return undefined;
  return { kind: 'remember', fact, instruction: true };
}

function forget(body: string, question: boolean): MemoryCommand | undefined {
  if (question) return undefined;
  const m = /^(?:please )?forget (?:(?:everything|anything|all|what you know|what you remember) about |about |that )?(.+)$/i.exec(body);
  if (!m) return undefined;
  const about = cleanObject(m[1]!);
  if (/^to\b/i.test(about)) return undefined; // "forget to mention …"
  if (ME.test(about)) return { kind: 'forget', about: 'me', me: true };
  // Something to find: at least one word that does not point at the conversation.
  const words = about.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  if (!words.some((w) => !CONVERSATION.has(w))) return undefined;
  return { kind: 'forget', about, me: false };
}

function recall(body: string): MemoryCommand | undefined {
  // "what do you remember about me?", "what do you know about me?": the persona bank.
  if (/^(?:so |and )?what (?:else )?(?:do|did) you (?:remember|recall|know)(?: about (?:me|myself))?$/i.test(body)) {
    return { kind: 'recall', about: 'me', me: true };
  }
  if (/^(?:tell me|show me|list) (?:what|everything) you (?:remember|know) about (?:me|myself)$/i.test(body)) {
    return { kind: 'recall', about: 'me', me: true };
  }
  // "what do you remember about my sister?" (but "what do you know about X" asks for knowledge).
  const m =
    /^(?:so |and )?what (?:else )?(?:do|did|have) you (?:remember(?:ed)?|recall(?:ed)?) (?:about|of) (.+)$/i.exec(body) ??
    /^(?:tell me|show me|list) (?:what|everything) you remember about (.+)$/i.exec(body);
  if (!m) return undefined;
  const about = cleanObject(m[1]!);
  if (!about) return undefined;
  return ME.test(about) ? { kind: 'recall', about: 'me', me: true } : { kind: 'recall', about, me: false };
}
