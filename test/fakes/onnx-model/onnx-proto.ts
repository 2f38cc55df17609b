// Encodes the subset of onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto,
// ValueInfoProto) that the generated test models use. Field numbers are those of onnx/onnx.proto.
import { ProtobufWriter } from './protobuf-writer.js';

/** TensorProto.DataType values used here. */
export const OnnxDataType = { FLOAT: 1, INT64: 7 } as const;
export type OnnxDataType = (typeof OnnxDataType)[keyof typeof OnnxDataType];

export type OnnxAttribute =
  | { name: string; kind: 'float'; value: number }
  | { name: string; kind: 'int'; value: number }
  | { name: string; kind: 'ints'; value: readonly number[] }
  | { name: string; kind: 'tensor'; value: OnnxTensor };

export interface OnnxNode {
  opType: string;
  inputs: readonly string[];
  outputs: readonly string[];
  name?: string;
  attributes?: readonly OnnxAttribute[];
}

/** A constant tensor: float32 or int64 data, little-endian in raw_data. */
export interface OnnxTensor {
  name: string;
  dims: readonly number[];
  data: Float32Array | BigInt64Array;
}

/** A graph input or output; a string dimension is symbolic (batch, sequence). */
export interface OnnxValueInfo {
  name: string;
  elemType: OnnxDataType;
  shape: readonly (number | string)[];
}

export interface OnnxGraph {
  name: string;
  nodes: readonly OnnxNode[];
  initializers: readonly OnnxTensor[];
  inputs: readonly OnnxValueInfo[];
  outputs: readonly OnnxValueInfo[];
}

export interface OnnxModel {
  /** IR version 8 goes with opset 17 (ONNX 1.12). */
  irVersion: number;
  opsetVersion: number;
  producerName: string;
  graph: OnnxGraph;
}

// AttributeProto.AttributeType
const ATTRIBUTE_FLOAT = 1;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_TENSOR = 4;
const ATTRIBUTE_INTS = 7;

export function encodeModel(model: OnnxModel): Uint8Array {
  const opset = new ProtobufWriter().stringField(1, '').varintField(2, model.opsetVersion);
  return new ProtobufWriter()
    .varintField(1, model.irVersion)
    .stringField(2, model.producerName)
    .messageField(7, encodeGraph(model.graph))
    .messageField(8, opset)
    .finish();
}

function encodeGraph(graph: OnnxGraph): ProtobufWriter {
  const writer = new ProtobufWriter();
  for (const node of graph.nodes) writer.messageField(1, encodeNode(node));
  writer.stringField(2, graph.name);
  for (const tensor of graph.initializers) writer.messageField(5, encodeTensor(tensor));
  for (const input of graph.inputs) writer.messageField(11, encodeValueInfo(input));
  for (const output of graph.outputs) writer.messageField(12, encodeValueInfo(output));
  return writer;
}

function encodeNode(node: OnnxNode): ProtobufWriter {
  const writer = new ProtobufWriter();
  for (const input of node.inputs) writer.stringField(1, input);
  for (const output of node.outputs) writer.stringField(2, output);
  if (node.name) writer.stringField(3, node.name);
  writer.stringField(4, node.opType);
  for (const attribute of node.attributes ?? []) writer.messageField(5, encodeAttribute(attribute));
  return writer;
}

function encodeAttribute(attribute: OnnxAttribute): ProtobufWriter {
  const writer = new ProtobufWriter().stringField(1, attribute.name);
  switch (attribute.kind) {
    case 'float':
      return writer.floatField(2, attribute.value).varintField(20, ATTRIBUTE_FLOAT);
    case 'int':
      return writer.varintField(3, attribute.value).varintField(20, ATTRIBUTE_INT);
    case 'tensor':
      return writer.messageField(5, encodeTensor(attribute.value)).varintField(20, ATTRIBUTE_TENSOR);
    case 'ints':
      return writer.packedVarintField(8, attribute.value).varintField(20, ATTRIBUTE_INTS);
  }
}

function encodeTensor(tensor: OnnxTensor): ProtobufWriter {
  const elementCount = tensor.dims.reduce((product, dim) => product * dim, 1);
  if (elementCount !== tensor.data.length) {
    throw new Error(`tensor ${tensor.name}: dims ${tensor.dims.join('x')} hold ${elementCount} values, data has ${tensor.data.length}`);
  }
  const dataType = tensor.data instanceof Float32Array ? OnnxDataType.FLOAT : OnnxDataType.INT64;
  // raw_data is little-endian; typed arrays are in the platform's order, little-endian on every machine we run on.
  const raw = new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  return new ProtobufWriter()
    .packedVarintField(1, tensor.dims)
    .varintField(2, dataType)
    .stringField(8, tensor.name)
    .bytesField(9, raw);
}

function encodeValueInfo(info: OnnxValueInfo): ProtobufWriter {
  const shape = new ProtobufWriter();
  for (const dim of info.shape) {
    const dimension = typeof dim === 'number' ? new ProtobufWriter().varintField(1, dim) : new ProtobufWriter().stringField(2, dim);
    shape.messageField(1, dimension);
  }
  const tensorType = new ProtobufWriter().varintField(1, info.elemType).messageField(2, shape);
  const type = new ProtobufWriter().messageField(1, tensorType);
  return new ProtobufWriter().stringField(1, info.name).messageField(2, type);
}
