/**
 * The judge model a replay without a candidate model uses: it answers a prompt with the answer the recorded model
 * gave to exactly that prompt (same prompt hash, src/judge/prompt.ts `promptHash`), and with nothing otherwise. A
 * prompt the recorded model never saw (the candidate policy changed what it says, or the proposal never reached a
 * model) is marked, so the proposal is counted as "needs a model" instead of being decided by a guess.
 */
import type { Verdict } from '../contracts/verdict';
import { ModelUnavailableError, type ChatMessage, type ChatReply, type ModelClient } from '../judge/model';
import { promptHash } from '../judge/prompt';

/** A recorded model answer, by the hash of the prompt it answered. */
export interface RecordedAnswer {
  model: string;
  raw: string;
  promptTokens: number | null;
  completionTokens: number | null;
}

/** Every model answer the verdicts carry (answers that were not valid JSON twice are left out). */
export function recordedAnswers(verdicts: readonly Verdict[]): Map<string, RecordedAnswer> {
  const out = new Map<string, RecordedAnswer>();
  for (const v of verdicts) {
    const a = v.judge;
    if (!a || a.raw_answer === null || a.error !== undefined) continue;
    out.set(a.prompt_hash, {
      model: a.model,
      raw: a.raw_answer,
      promptTokens: a.prompt_tokens,
      completionTokens: a.completion_tokens,
    });
  }
  return out;
}

/** A {@link ModelClient} that only repeats recorded answers; `missed` is set when a prompt has none. */
export class RecordedModel implements ModelClient {
  missed = false;
  reused = 0;
  private last: string;

  constructor(private readonly answers: ReadonlyMap<string, RecordedAnswer>) {
    this.last = 'recorded';
  }

  get model(): string {
    return this.last;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- a model client: its contract is a promise
  async chat(messages: readonly ChatMessage[]): Promise<ChatReply> {
    const [system, user] = messages;
    const answer =
      system && user && messages.length === 2 ? this.answers.get(promptHash(system.content, user.content)) : undefined;
    if (!answer) {
      this.missed = true;
      throw new ModelUnavailableError('no recorded model answer for this prompt');
    }
    this.reused += 1;
    this.last = answer.model;
    return { content: answer.raw, promptTokens: answer.promptTokens, completionTokens: answer.completionTokens };
  }
}

/** A {@link ModelClient} that answers nothing and counts how many proposals would ask it (before any real call). */
export class ModelProbe implements ModelClient {
  asked = false;
  constructor(readonly model: string) {}

  // eslint-disable-next-line @typescript-eslint/require-await -- a model client: its contract is a promise
  async chat(): Promise<ChatReply> {
    this.asked = true;
    throw new ModelUnavailableError('probe: counting the proposals that need the model');
  }
}
