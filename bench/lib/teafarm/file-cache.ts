// TeaFarm's result cache on disk (one JSON file per finished case or question set, named by a hash
// of its key): an interrupted bench:teafarm run, run again, continues with what is not done.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseResult, TeaFarmCache, TeaFarmQuestion } from '../../../src/memory/eval/teafarm';

export class FileTeaFarmCache implements TeaFarmCache {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  private file(kind: string, key: string): string {
    return join(this.dir, `${kind}-${createHash('sha256').update(key).digest('hex')}.json`);
  }

  private read<T>(file: string): T | undefined {
    if (!existsSync(file)) return undefined;
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as T;
    } catch {
      return undefined; // cut short by an interruption: done again
    }
  }

  private write(file: string, value: unknown): void {
    // Written whole, then renamed: an interruption never leaves half a result under the key.
    writeFileSync(`${file}.tmp`, JSON.stringify(value));
    renameSync(`${file}.tmp`, file);
  }

  async getCase(key: string): Promise<CaseResult | undefined> {
    return this.read<CaseResult>(this.file('case', key));
  }
  async putCase(key: string, result: CaseResult): Promise<void> {
    this.write(this.file('case', key), result);
  }
  async getQuestions(key: string): Promise<TeaFarmQuestion[] | undefined> {
    return this.read<TeaFarmQuestion[]>(this.file('questions', key));
  }
  async putQuestions(key: string, questions: TeaFarmQuestion[]): Promise<void> {
    this.write(this.file('questions', key), questions);
  }
}
