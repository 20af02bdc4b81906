// A minimal protobuf writer, enough for onnx.proto's ModelProto, shared by the test-asset
// generators (scripts/make-test-assets.mjs and lib/tiny-causal-lm.mjs). Node's stdlib only.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const WIRE_VARINT = 0;
const WIRE_LEN = 2;

function varint(value) {
  // int64 fields: negative numbers are 10-byte two's complement varints.
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return Buffer.from(out);
}

const key = (field, wire) => varint((field << 3) | wire);
export const fInt = (field, value) => Buffer.concat([key(field, WIRE_VARINT), varint(value)]);
export const fBytes = (field, bytes) => Buffer.concat([key(field, WIRE_LEN), varint(bytes.length), bytes]);
export const fStr = (field, s) => fBytes(field, Buffer.from(s, 'utf8'));
export const fMsg = (field, parts) => fBytes(field, Buffer.concat(parts));

// onnx.proto enums and field numbers.
export const FLOAT = 1;
export const INT64 = 7;
const ATTR_INT = 2;
const ATTR_INTS = 7;

/** TensorShapeProto.Dimension: a number (dim_value) or a symbolic name (dim_param). */
export const dim = (d) => (typeof d === 'number' ? fMsg(1, [fInt(1, d)]) : fMsg(1, [fStr(2, d)]));
/** ValueInfoProto { name=1, type=2: TypeProto { tensor_type=1: { elem_type=1, shape=2 } } } */
export const valueInfo = (name, elemType, dims) => [fStr(1, name), fMsg(2, [fMsg(1, [fInt(1, elemType), fMsg(2, dims.map(dim))])])];
/** TensorProto { dims=1, data_type=2, name=8, raw_data=9 } (raw data is little-endian) */
export const tensor = (name, dataType, dims, raw) => [...dims.map((d) => fInt(1, d)), fInt(2, dataType), fStr(8, name), fBytes(9, raw)];
/** AttributeProto { name=1, i=3, type=20 } */
export const intAttr = (name, i) => [fStr(1, name), fInt(3, i), fInt(20, ATTR_INT)];
/** AttributeProto { name=1, ints=8, type=20 } */
export const intsAttr = (name, list) => [fStr(1, name), ...list.map((i) => fInt(8, i)), fInt(20, ATTR_INTS)];
/** NodeProto { input=1, output=2, name=3, op_type=4, attribute=5 } */
export const node = (op, inputs, outputs, name, attrs = []) => [
  ...inputs.map((i) => fStr(1, i)),
  ...outputs.map((o) => fStr(2, o)),
  fStr(3, name),
  fStr(4, op),
  ...attrs.map((a) => fMsg(5, a)),
];

/** Writes `data` unless the file already holds exactly it (keeps the generators idempotent). */
export function writeIfChanged(path, data) {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (existsSync(path) && readFileSync(path).equals(buf)) return false;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, buf);
  return true;
}
