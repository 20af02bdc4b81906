// A streaming reply rendered whole at every change costs more with every word: the whole text is
// lexed, parsed, sanitised and put into the page again, so a long reply froze the page. Here the
// blocks that are finished keep their HTML (and their DOM); only the last blocks are rendered
// again, so the work per update does not grow with the reply's length.
import type { WindowLike } from 'dompurify';
import type { Token } from 'marked';
import { lexBlocks, renderBlocks, renderMarkdown } from './markdown';

/** A run of blocks rendered together; `key` stays the same while its HTML does. */
export interface MarkdownPart {
  key: string;
  html: string;
}

/**
 * Blocks kept open at the end: the next words may still change them (a paragraph becomes a
 * heading or a table, a list or a code block grows).
 */
const OPEN_BLOCKS = 2;

/** A link reference definition (`[x]: url`) can change blocks written before it. */
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]\n]+\]:/m;

/**
 * New text lexed per update, at most: a burst (a server sending the whole reply at once, or a long
 * reply opened) is shown over a few frames instead of freezing the page for one.
 */
const STEP = 8 * 1024;

export class MarkdownStream {
  /** The text of the finished blocks, and their HTML in parts. */
  private doneText = '';
  private done: MarkdownPart[] = [];
  private serial = 0;
  /** The last update did not reach the end of its text: update again (at the next frame). */
  behind = false;

  constructor(private readonly win?: WindowLike) {}

  /**
   * The parts of `text` (which usually extends the text of the last call), up to STEP characters
   * further than the blocks finished before. `final`: the reply is written; a text with reference
   * definitions is then rendered whole once, as renderMarkdown would.
   */
  update(text: string, final = false): MarkdownPart[] {
    const normal = text.replace(/\r\n?/g, '\n');
    if (!normal.startsWith(this.doneText)) this.reset();
    if (final && REFERENCE_DEFINITION.test(normal)) {
      this.reset();
      this.behind = false;
      return [{ key: 'whole', html: renderMarkdown(normal, this.win) }];
    }
    const from = this.doneText.length;
    this.behind = normal.length - from > STEP;
    let tokens = lexBlocks(normal.slice(from, this.behind ? from + STEP : undefined));
    let cut = finishedCount(tokens);
    // One block longer than the window: take it whole rather than never finish it.
    if (cut === 0 && this.behind) {
      this.behind = false;
      tokens = lexBlocks(normal.slice(from));
      cut = finishedCount(tokens);
    }
    if (cut > 0) {
      const finished = tokens.slice(0, cut);
      const raw = finished.map((t) => t.raw).join('');
      // Only when marked's blocks add up to the text (they do; a surprise just renders more).
      if (normal.startsWith(raw, from)) {
        this.done.push({ key: `p${this.serial++}`, html: renderBlocks(finished, this.win) });
        this.doneText += raw;
      } else {
        cut = 0;
        this.behind = false;
        tokens = lexBlocks(normal.slice(from));
      }
    }
    return [...this.done, { key: 'open', html: renderBlocks(tokens.slice(cut), this.win) }];
  }

  private reset(): void {
    this.doneText = '';
    this.done = [];
    this.serial++;
  }
}

/** How many of the blocks are finished: all but the last OPEN_BLOCKS that are not blank lines. */
function finishedCount(tokens: Token[]): number {
  let cut = tokens.length;
  for (let open = 0; cut > 0 && open < OPEN_BLOCKS;) if (tokens[--cut].type !== 'space') open++;
  return cut;
}
