// What an ONNX model that transformers.js runs is told apart by: the file of its repository to run
// and, for an embedding model, how its token vectors become one. The model lists (catalog.ts) and
// the workers' protocols (messages.ts) both name them.

/** Which ONNX file of a model repository to run (transformers.js dtype: q8 = model_quantized.onnx). */
export type CpuDtype = 'q4' | 'q8' | 'fp32';

/** An embedding model's file: q8 = model_quantized.onnx, fp32 = model.onnx. */
export type EmbeddingDtype = 'q8' | 'fp32';

/** How an embedding model was trained to pool token vectors into a sentence vector. */
export type Pooling = 'mean' | 'cls';
