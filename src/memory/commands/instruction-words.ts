// Whether words the person asked Tealeaf to remember are about how Tealeaf should answer (a
// standing instruction, followed in every reply) or a fact to keep. Read by what the words are
// about, not by their first word: "answers should always be short", "I prefer short answers" and
// "keep your answers short" are all instructions; "I always take the 8:15 train" is a fact.
// Where the words alone do not settle it the answer is 'unsure': the caller asks the loaded model
// (instruction-ask.ts), and the person can move the item either way in one click.

/** instruction: about how to answer; fact: about the person or the world; unsure: either. */
export type InstructionReading = 'instruction' | 'fact' | 'unsure';

/** What an answer is made of: a sentence that speaks of these speaks of the answers. */
const REPLY_NOUNS =
  /\b(answers?|repl(?:y|ies)|responses?|messages?|explanations?|summar(?:y|ies)|tone|wording|sentences?|paragraphs?|bullet(?: points?)?|bulleted|lists?|emojis?|emoticons?|markdown|headings?|jargon|code blocks?|citations?|sources|units|spelling|formatting|format|questions? at the end|follow-up questions?|disclaimers?|caveats?)\b/i;

/** Ways of answering: style words, languages, units and spellings. */
const STYLE =
  /\b(short(?:er)?|brief(?:er|ly)?|concise(?:ly)?|succinct(?:ly)?|terse|to the point|long(?:er)?|detailed|thorough|simple|simpler|plain|formal(?:ly)?|informal(?:ly)?|casual(?:ly)?|polite(?:ly)?|blunt(?:ly)?|direct(?:ly)?|gentle|gently|funny|serious(?:ly)?|friendly|warm(?:ly)?|step by step|one sentence|one paragraph|metric|imperial|celsius|fahrenheit|british|american|english|french|german|spanish|italian|portuguese|dutch|norwegian|swedish|danish|japanese|chinese|korean|lowercase|uppercase|first name|24-hour|12-hour)\b/i;

/** Verbs of Tealeaf's speaking: an imperative or rule with one of these is about the answers. */
const SPEECH_VERBS =
  /\b(answer(?:ing)?|repl(?:y|ying)|respond(?:ing)?|writ(?:e|ing)|explain(?:ing)?|speak(?:ing)?|talk(?:ing)?|say(?:ing)?|call(?:ing)? me|address(?:ing)? me|refer(?:ring)? to me|greet(?:ing)? me|sign(?:ing)? off|summari[sz](?:e|ing)|translat(?:e|ing)|cit(?:e|ing)|quot(?:e|ing)|apologi[sz](?:e|ing)|lectur(?:e|ing)|swear(?:ing)?|curs(?:e|ing)|format(?:ting)?|mention(?:ing)?|suggest(?:ing)?|recommend(?:ing)?|correct(?:ing)? me|remind(?:ing)? me|ask(?:ing)? me|tell(?:ing)? me|use|using|avoid(?:ing)?|start(?:ing)?|end(?:ing)?|open(?:ing)?|clos(?:e|ing))\b/i;

/** Imperatives that only ever ask something of the one who answers. */
const SPEECH_IMPERATIVE =
  /^(answer|reply|respond|write|speak|talk|explain|summari[sz]e|translate|cite|quote|greet me|call me|address me|refer to me|sign off|format)\b/i;

/** Imperatives that can ask anything ("keep your answers short", "keep the receipt"). */
const GENERAL_IMPERATIVE =
  /^(always|never|don'?t|do not|stop|keep|use|avoid|be|make|give|show|tell|ask|add|try|stick|limit|include|skip|mention|remind|no more|no|fewer|less|more|without|drop|cut|go easy|stay|please stop)\b/i;

/** Tealeaf addressed as the one who does something from now on ("you should …", "Tealeaf, always …"). */
const YOU_RULE =
  /^(?:you|tealeaf)\s+(?:should|must|need to|have to|ought to|are to|will always|will never|always|never|shouldn't|mustn't|don't|do not|can stop|could|can|may|'ll)\b/i;

/** The person asks for a way of answering ("I'd like you to …", "I prefer it when you …"). */
const WANTS_YOU =
  /\b(?:i|i'd|i would|i'll|please)\s+(?:really\s+)?(?:prefer|like|love|want|need|rather|appreciate|hate|dislike|can't stand|cannot stand|don't like|do not like)\s+(?:it\s+)?(?:if\s+|when\s+|that\s+)?(?:you|tealeaf)\b/i;
const PREFERS =
  /\b(?:i|i'd|i would)\s+(?:really\s+)?(?:prefer|like|love|want|need|rather have|appreciate|hate|dislike|can't stand|cannot stand|don't like|do not like|find)\b/i;

/** "When you answer, …", "in your replies …": the sentence sets how answers go. */
const WHEN_YOU = /\b(?:when|whenever|if)\s+(?:you|tealeaf)\s+(?:answer|reply|respond|write|explain|talk|speak|give|suggest|recommend)/i;
const IN_YOUR =
  /\b(?:in|for|to|of)\s+(?:your|all|every|each|any|the)\s+(?:own\s+)?(?:answers?|repl(?:y|ies)|responses?|messages?|explanations?)\b/i;
/** "answers should be short", "replies must be in French": a rule about the answers themselves. */
const ANSWERS_RULE =
  /^(?:(?:your|the|all|every|each|any|my)\s+)?(?:answers?|repl(?:y|ies)|responses?|messages?|explanations?|summar(?:y|ies)|tone)\b[^.;]*?\b(?:should|must|need(?:s)? to|ha(?:ve|s) to|ought to|are to|is to|always|never|can|could|shall)\b/i;

/** Someone other than the person or Tealeaf at the start: what they do is a fact about them. */
const OTHER_SUBJECT = /^(?:my|our|his|her|their)\s+\w+|^(?:he|she|they|we|it)\b|^[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\s+(?!should|must)[a-z]+s\b/;

/** How the words read: an instruction about answering, a fact, or unsure. */
export function instructionReading(words: string): InstructionReading {
  const s = words
    .replace(/\s+/g, ' ')
    .replace(/[’‘]/g, "'")
    .trim()
    .replace(/^please,?\s+/i, '')
    .replace(/[\s.!…]+$/u, '');
  if (!s) return 'fact';
  const reply = REPLY_NOUNS.test(s);
  const style = STYLE.test(s);
  const speech = SPEECH_VERBS.test(s);
  const aboutMe = /\b(me|my|i)\b/i.test(s);
  const toYou = /\b(you|your|yourself|tealeaf)\b/i.test(s);

  if (SPEECH_IMPERATIVE.test(s) || /\b(?:call me|address me as|refer to me as)\b/i.test(s)) return 'instruction';
  if (YOU_RULE.test(s)) return 'instruction';
  if (WANTS_YOU.test(s) || WHEN_YOU.test(s) || IN_YOUR.test(s) || ANSWERS_RULE.test(s)) return 'instruction';
  if (GENERAL_IMPERATIVE.test(s)) {
    // "Keep your answers short", "be blunt with me", "no emoji", "never apologise": about answering.
    if (reply || toYou || speech || style || /\bwith me\b|\bto me\b|\bme\b/i.test(s)) return 'instruction';
    // "Always lock the back door": a rule, but not one about answering.
    return 'unsure';
  }
  if (OTHER_SUBJECT.test(s)) return reply || style ? 'unsure' : 'fact';
  // "I prefer short answers", "I hate bullet points": the person's taste in answers.
  if (PREFERS.test(s) && reply) return 'instruction';
  if (PREFERS.test(s) && style && !aboutMe) return 'unsure';
  if (reply) return 'unsure';
  if (toYou && (style || speech) && !/\byou (?:helped|told|said|were|did|made|gave|showed|asked)\b/i.test(s)) return 'unsure';
  return 'fact';
}
