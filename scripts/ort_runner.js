#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (npm onnxruntime-node, CPU) on .npy
// inputs: the reference for third-party models and the engine Collage is
// compared against. Prints one JSON line:
//   {"median_ms", "p10_ms", "p90_ms", "min_ms", "max_ms", "repeat", "threads", "outputs": [...]}
// Usage: ort_runner.js MODEL --input NAME=FILE.npy ... [--threads N] [--repeat N]
//        [--warmup N] [--save-outputs DIR] [--modules DIR] [--profile PREFIX]
// --profile then runs the model as many times again (after as many warm-up runs)
// in a session of its own with ONNX Runtime's profiler on, and writes its trace
// (PREFIX_<date>.json, one event per node per run, the warm-up runs included;
// scripts/ort_profile.py summarizes it). The timed runs are not traced.
'use strict';
const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const args = { inputs: {}, threads: 2, repeat: 20, warmup: 3, saveOutputs: null, modules: null,
    profile: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--input') {
      const [name, file] = next().split('=');
      args.inputs[name] = file;
    } else if (a === '--threads') args.threads = parseInt(next(), 10);
    else if (a === '--repeat') args.repeat = parseInt(next(), 10);
    else if (a === '--warmup') args.warmup = parseInt(next(), 10);
    else if (a === '--save-outputs') args.saveOutputs = next();
    else if (a === '--modules') args.modules = next();
    else if (a === '--profile') args.profile = next();
    else if (!args.model) args.model = a;
    else throw new Error(`unexpected argument ${a}`);
  }
  if (!args.model) throw new Error('usage: ort_runner.js MODEL --input NAME=FILE.npy ...');
  return args;
}

const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
  '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim())
    .filter(s => s.length).map(Number);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: fortran order`);
  const [type, Ctor] = NPY_TYPES[descr] || [];
  if (!type) throw new Error(`${file}: unsupported dtype ${descr}`);
  const offset = start + headerLen;
  const bytes = buf.subarray(offset);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return { type, shape, data: new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT) };
}

function writeNpy(file, tensor) {
  const descr = Object.keys(NPY_TYPES).find(k => NPY_TYPES[k][0] === tensor.type);
  if (!descr) throw new Error(`cannot save tensor of type ${tensor.type}`);
  const dims = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
}

function percentile(sorted, p) {
  const rank = p * (sorted.length - 1);
  const lo = Math.floor(rank), hi = Math.ceil(rank);
  return sorted[lo] * (1 - (rank - lo)) + sorted[hi] * (rank - lo);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = require(args.modules ? path.join(args.modules, 'onnxruntime-node') : 'onnxruntime-node');
  const options = {
    intraOpNumThreads: args.threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  };
  const session = await ort.InferenceSession.create(args.model, options);
  const feeds = {};
  for (const [name, file] of Object.entries(args.inputs)) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
  }
  let results;
  for (let i = 0; i < args.warmup; i++) results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.repeat; i++) {
    const start = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (!results) results = await session.run(feeds);
  if (args.profile) {
    // A session of its own, made after the timed runs, so that tracing does
    // not slow them.
    const profiled = await ort.InferenceSession.create(
      args.model, { ...options, enableProfiling: true, profileFilePrefix: args.profile });
    for (let i = 0; i < args.warmup; i++) await profiled.run(feeds);
    for (let i = 0; i < Math.max(args.repeat, 1); i++) await profiled.run(feeds);
    profiled.endProfiling();
  }
  const outputs = [];
  for (const name of session.outputNames) {
    const t = results[name];
    outputs.push({ name, shape: t.dims, type: t.type });
    if (args.saveOutputs) {
      fs.mkdirSync(args.saveOutputs, { recursive: true });
      writeNpy(path.join(args.saveOutputs, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), t);
    }
  }
  const sorted = times.slice().sort((a, b) => a - b);
  const report = { threads: args.threads, repeat: args.repeat, outputs };
  if (sorted.length) {
    Object.assign(report, {
      median_ms: percentile(sorted, 0.5), p10_ms: percentile(sorted, 0.1),
      p90_ms: percentile(sorted, 0.9), min_ms: sorted[0], max_ms: sorted[sorted.length - 1],
    });
  }
  console.log(JSON.stringify(report));
}

main().catch(e => { console.error(`ort_runner: ${e.message}`); process.exit(2); });
