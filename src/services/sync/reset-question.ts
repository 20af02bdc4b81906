// Another device deleted everything: the loop waits on this question until the user answers in
// Settings ("Delete here too" or "Keep this device's data"). At most one is open; a closed tab or
// sync turned off ends it unanswered, so nothing is wiped or sent.
export type ResetChoice = 'wipe' | 'keep';

export class ResetQuestion {
  private open?: { answer: (choice: ResetChoice) => void; fail: (e: Error) => void };

  /** Resolves with the user's answer; rejects if the question ends unanswered. */
  ask(): Promise<ResetChoice> {
    this.open?.fail(new Error('Asked again.'));
    return new Promise((answer, fail) => (this.open = { answer, fail }));
  }

  /** Gives the answer to the open question; false when none is open. */
  answer(choice: ResetChoice): boolean {
    const open = this.open;
    this.open = undefined;
    open?.answer(choice);
    return open !== undefined;
  }

  /** Ends the open question, if any, unanswered. */
  end(why: string): void {
    this.open?.fail(new Error(why));
    this.open = undefined;
  }
}
