// The part-of-speech tagger behind LD-Agent's topic nouns (src/memory/retrieval/topics.ts):
// wink-nlp with its small English model, loaded on first use (about 1 MB of script, which only the
// topic-nouns switch needs). Tagging is a few hundredths of a millisecond per memory, so a whole
// store is tagged when the index is built, and nothing extra is stored.
import type { NounExtractor } from '../memory/retrieval/topics';

const NOUN_TAGS = new Set(['NOUN', 'PROPN']);

let loading: Promise<NounExtractor> | undefined;

/** The noun extractor; the tagger's model is loaded once per page (or Node process). */
export function loadNounExtractor(): Promise<NounExtractor> {
  loading ??= (async () => {
    const [{ default: winkNLP }, { default: model }] = await Promise.all([import('wink-nlp'), import('wink-eng-lite-web-model')]);
    const nlp = winkNLP(model, ['pos']);
    const its = nlp.its;
    return (text: string): string[] => {
      const tokens = nlp.readDoc(text).tokens();
      const tags = tokens.out(its.pos);
      // Lemmas, so "kids" in a memory meets "kid" in a question.
      // (wink's types declare the lemma function with a signature `out` does not accept; it works.)
      const lemmas = tokens.out(its.lemma as unknown as typeof its.normal);
      const nouns: string[] = [];
      tags.forEach((tag, i) => {
        const lemma = String(lemmas[i] ?? '').toLowerCase();
        if (NOUN_TAGS.has(String(tag)) && lemma.length > 1 && /\p{L}/u.test(lemma)) nouns.push(lemma);
      });
      return nouns;
    };
  })();
  // A failed load (a missing chunk offline) is retried next time rather than remembered.
  loading.catch(() => (loading = undefined));
  return loading;
}
