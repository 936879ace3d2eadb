#!/usr/bin/env node
// The ONNX Runtime side of the comparison (bench/compare_ort.py): one model at one batch size,
// printed as one JSON line.
//
//   node ort_bench.js MODEL.onnx BATCH [--threads 2] [--warmup 5] [--min-steps 50]
//                     [--min-time 2] [--seed 42] [--no-spin]
//
// The session runs on ONNX Runtime's CPU execution provider (MLAS) with intra-op threads =
// --threads (xpubench's `threads`), one inter-op thread, sequential execution and every graph
// optimisation on (level "all": constant folding, conv+bn/activation/add fusion, NCHWc
// layouts). The input, uniform in [-1, 1) from a seeded generator, is made once and fed to
// every step, as xpubench's resident synthetic batches are. After the warm-up runs, it times
// single runs until both --min-steps and --min-time are reached, like a repeat of xpubench.
// --no-spin sets session.intra_op.allow_spinning=0: idle pool threads block instead of spinning
// (the counterpart of OMP_WAIT_POLICY=passive on the xpubench side, for a shared machine).
// onnxruntime-node is installed next to this file at bench time (compare_ort.py does it).
'use strict';

const path = require('path');

function parseArgs(argv) {
  const a = { threads: 2, warmup: 5, minSteps: 50, minTime: 2.0, seed: 42, spin: true };
  const pos = [];
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return Number(argv[++i]);
    };
    if (k === '--threads') a.threads = v();
    else if (k === '--warmup') a.warmup = v();
    else if (k === '--min-steps') a.minSteps = v();
    else if (k === '--min-time') a.minTime = v();
    else if (k === '--seed') a.seed = v();
    else if (k === '--no-spin') a.spin = false;
    else pos.push(k);
  }
  if (pos.length !== 2) throw new Error('usage: ort_bench.js MODEL.onnx BATCH [options]');
  a.model = pos[0];
  a.batch = Number(pos[1]);
  return a;
}

// A small deterministic generator (mulberry32): the same input on every run of the script.
function uniform(n, seed) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: a.spin ? '1' : '0' } } },
  });
  const name = session.inputNames[0];
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  const dims = meta && meta.shape ? meta.shape.slice(1).map(Number) : null;
  if (!dims || dims.some((d) => !(d > 0))) throw new Error(`cannot read the input shape of ${a.model}`);
  const shape = [a.batch, ...dims];
  const n = shape.reduce((x, y) => x * y, 1);
  const feeds = { [name]: new ort.Tensor('float32', uniform(n, a.seed), shape) };
  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const times = [];
  const start = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - start) / 1e9;
  while (times.length < a.minSteps || elapsed() < a.minTime) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const total = times.reduce((x, y) => x + y, 0);
  const sorted = times.slice().sort((x, y) => x - y);
  const version = require(path.join(__dirname, 'node_modules', 'onnxruntime-node', 'package.json')).version;
  console.log(JSON.stringify({
    framework: `onnxruntime-node ${version}`, model: path.basename(a.model), batch: a.batch,
    threads: a.threads, graph_optimization: 'all', spinning: a.spin, steps: times.length,
    samples_per_s: (a.batch * times.length) / total, p50_ms: 1e3 * percentile(sorted, 0.5),
    p95_ms: 1e3 * percentile(sorted, 0.95), min_ms: 1e3 * sorted[0],
  }));
}

main().catch((e) => {
  console.error(`ort_bench.js: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
