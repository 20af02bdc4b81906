// Fitting every model call into the model's window (docs/METHOD.md, "Built for the models we ship").
export { estimateMessages, estimateTokens, MESSAGE_OVERHEAD, REPLY_PRIMER } from './tokens';
export { FALLBACK_WINDOW, outputFor, windowOf } from './window';
export {
  fitPrompt,
  fittedChat,
  fittedJson,
  isPromptTooLong,
  PromptTooLongError,
  type FitRequest,
  type FitTarget,
  type FittedCall,
  type FittedPrompt,
  type PromptBuilder,
} from './call';
export { schemaInstruction, withSchemaInstruction } from './schema';
