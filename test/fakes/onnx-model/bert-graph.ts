// A tiny BERT-shaped ONNX graph with random weights: the same inputs and outputs as an exported BERT
// (input_ids, attention_mask, token_type_ids → last_hidden_state, or logits for a cross-encoder), so the
// real transformers.js pipelines run it. One attention head per layer; the feed-forward uses Tanh (Gelu
// only exists from opset 20). The attention mask really masks: padded tokens do not change the others.
import { OnnxDataType, type OnnxGraph, type OnnxModel, type OnnxNode, type OnnxTensor } from './onnx-proto.js';
import { seededNormal } from './seeded-random.js';

export interface BertGraphShape {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  layers: number;
  maxPositions: number;
  typeVocabSize: number;
  /** 'embeddings' outputs last_hidden_state [batch, sequence, hidden]; 'classification' outputs logits [batch, labels]. */
  head: { kind: 'embeddings' } | { kind: 'classification'; labels: number };
  seed: number;
}

const OPSET = 17; // LayerNormalization is an ONNX op from opset 17
const IR_VERSION = 8;
const LAYER_NORM_EPSILON = 1e-12;

/** Collects nodes and initializers; each helper returns the name of the tensor it produced. */
class GraphBuilder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxTensor[] = [];
  private readonly normal: (std: number) => number;

  constructor(seed: number) {
    this.normal = seededNormal(seed);
  }

  op(opType: string, inputs: string[], output: string, attributes: OnnxNode['attributes'] = []): string {
    this.nodes.push({ opType, inputs, outputs: [output], name: `${opType}:${output}`, attributes });
    return output;
  }

  randomWeight(name: string, dims: number[], std: number): string {
    const data = new Float32Array(dims.reduce((product, dim) => product * dim, 1));
    for (let index = 0; index < data.length; index++) data[index] = this.normal(std);
    this.initializers.push({ name, dims, data });
    return name;
  }

  filledWeight(name: string, dims: number[], value: number): string {
    const data = new Float32Array(dims.reduce((product, dim) => product * dim, 1)).fill(value);
    this.initializers.push({ name, dims, data });
    return name;
  }

  int64Constant(name: string, dims: number[], values: number[]): string {
    this.initializers.push({ name, dims, data: BigInt64Array.from(values.map(BigInt)) });
    return name;
  }

  floatScalar(name: string, value: number): string {
    this.initializers.push({ name, dims: [], data: Float32Array.of(value) });
    return name;
  }

  /** x · W + b, W of shape [inSize, outSize] scaled so activations keep unit variance. */
  linear(prefix: string, input: string, inSize: number, outSize: number): string {
    const weight = this.randomWeight(`${prefix}.weight`, [inSize, outSize], 1 / Math.sqrt(inSize));
    const bias = this.randomWeight(`${prefix}.bias`, [outSize], 0.02);
    return this.op('Add', [this.op('MatMul', [input, weight], `${prefix}.matmul`), bias], `${prefix}.out`);
  }

  layerNorm(prefix: string, input: string, size: number): string {
    const scale = this.filledWeight(`${prefix}.scale`, [size], 1);
    const bias = this.filledWeight(`${prefix}.bias`, [size], 0);
    return this.op('LayerNormalization', [input, scale, bias], `${prefix}.out`, [
      { name: 'axis', kind: 'int', value: -1 },
      { name: 'epsilon', kind: 'float', value: LAYER_NORM_EPSILON },
    ]);
  }
}

export function buildBertModel(shape: BertGraphShape): OnnxModel {
  const g = new GraphBuilder(shape.seed);
  const hidden = shape.hiddenSize;
  const zero = g.int64Constant('const.zero', [], [0]);
  const one = g.int64Constant('const.one', [], [1]);

  // Embeddings: word + token type + position, then LayerNorm.
  const words = g.op('Gather', [g.randomWeight('embeddings.word', [shape.vocabSize, hidden], 1), 'input_ids'], 'embeddings.words');
  const types = g.op('Gather', [g.randomWeight('embeddings.token_type', [shape.typeVocabSize, hidden], 0.5), 'token_type_ids'], 'embeddings.types');
  const sequenceLength = g.op('Gather', [g.op('Shape', ['input_ids'], 'input_ids.shape'), one], 'sequence_length', [{ name: 'axis', kind: 'int', value: 0 }]);
  const positionIds = g.op('Range', [zero, sequenceLength, one], 'position_ids');
  const positions = g.op('Gather', [g.randomWeight('embeddings.position', [shape.maxPositions, hidden], 0.5), positionIds], 'embeddings.positions');
  const summed = g.op('Add', [g.op('Add', [words, types], 'embeddings.words_types'), positions], 'embeddings.sum');
  let x = g.layerNorm('embeddings.norm', summed, hidden);

  // Additive attention bias: 0 where attention_mask is 1, -10000 where it is 0; shape [batch, 1, sequence].
  const maskFloat = g.op('Cast', ['attention_mask'], 'mask.float', [{ name: 'to', kind: 'int', value: OnnxDataType.FLOAT }]);
  const masked = g.op('Sub', [g.floatScalar('const.one_float', 1), maskFloat], 'mask.inverted');
  const maskBias = g.op(
    'Unsqueeze',
    [g.op('Mul', [masked, g.floatScalar('const.mask_value', -10000)], 'mask.bias2d'), g.int64Constant('const.axis1', [1], [1])],
    'mask.bias',
  );

  for (let layer = 0; layer < shape.layers; layer++) {
    const p = `layer${layer}`;
    const query = g.linear(`${p}.query`, x, hidden, hidden);
    const key = g.linear(`${p}.key`, x, hidden, hidden);
    const value = g.linear(`${p}.value`, x, hidden, hidden);
    const keyT = g.op('Transpose', [key], `${p}.key_t`, [{ name: 'perm', kind: 'ints', value: [0, 2, 1] }]);
    const scores = g.op('Mul', [g.op('MatMul', [query, keyT], `${p}.scores_raw`), g.floatScalar(`${p}.scale`, 1 / Math.sqrt(hidden))], `${p}.scores`);
    const probabilities = g.op('Softmax', [g.op('Add', [scores, maskBias], `${p}.scores_masked`)], `${p}.probabilities`, [{ name: 'axis', kind: 'int', value: -1 }]);
    const context = g.op('MatMul', [probabilities, value], `${p}.context`);
    const attended = g.layerNorm(`${p}.attention_norm`, g.op('Add', [x, g.linear(`${p}.attention_out`, context, hidden, hidden)], `${p}.attention_residual`), hidden);
    const intermediate = g.op('Tanh', [g.linear(`${p}.intermediate`, attended, hidden, shape.intermediateSize)], `${p}.intermediate_act`);
    const output = g.linear(`${p}.output`, intermediate, shape.intermediateSize, hidden);
    x = g.layerNorm(`${p}.output_norm`, g.op('Add', [attended, output], `${p}.output_residual`), hidden);
  }

  const batchBySequence = ['batch_size', 'sequence_length'];
  const inputs = ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => ({ name, elemType: OnnxDataType.INT64, shape: batchBySequence }));
  let outputName: string;
  let outputShape: (number | string)[];
  if (shape.head.kind === 'embeddings') {
    outputName = g.op('Identity', [x], 'last_hidden_state');
    outputShape = ['batch_size', 'sequence_length', hidden];
  } else {
    // BertForSequenceClassification: the [CLS] token through a Tanh pooler, then a linear classifier.
    const cls = g.op('Gather', [x, zero], 'pooler.cls', [{ name: 'axis', kind: 'int', value: 1 }]);
    const pooled = g.op('Tanh', [g.linear('pooler.dense', cls, hidden, hidden)], 'pooler.out');
    outputName = g.op('Identity', [g.linear('classifier', pooled, hidden, shape.head.labels)], 'logits');
    outputShape = ['batch_size', shape.head.labels];
  }

  const graph: OnnxGraph = {
    name: 'tiny-bert',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs,
    outputs: [{ name: outputName, elemType: OnnxDataType.FLOAT, shape: outputShape }],
  };
  return { irVersion: IR_VERSION, opsetVersion: OPSET, producerName: 'quire-test-fakes', graph };
}
