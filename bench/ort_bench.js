// Times one ONNX model under ONNX Runtime (onnxruntime-node, CPU), for
// bench/run_bench.py, which builds the one-node models and checks
// their output.
//
//     node bench/ort_bench.js --version
//     node bench/ort_bench.js SPEC.json
//
// SPEC: {"model": "m.onnx", "threads": 1,
//        "inputs": [{"name": "query", "dims": [1, 64, 128], "file": "q.f32"}, ...],
//        "output_file": "out.f32", "min_reps": 3, "min_seconds": 1.0}
// Inputs are float32; an input without "file" is filled with uniform random
// numbers in [-1, 1), one with a file is read from its raw little-endian
// floats. With "output_file", the first output is written there the same
// way. The session runs with intraOpNumThreads = threads, interOpNumThreads
// = 1 and every graph optimization; after a warm-up run, session.run is
// repeated at least min_reps times and for at least min_seconds, and the
// median is printed as one JSON line.
//
// onnxruntime-node is found the way node finds any module: in
// bench/node_modules (npm install --ignore-scripts in bench) or
// a directory in NODE_PATH.
'use strict';

const fs = require('fs');

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  console.error(`ort_bench: cannot load onnxruntime-node (${e.code || e.message})`);
  process.exit(3);
}
const version = ort.env.versions.node || ort.env.versions.common || '?';

async function main() {
  if (process.argv[2] === '--version') {
    console.log(JSON.stringify({ort: version, node: process.versions.node}));
    return;
  }
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(spec.model, {
    intraOpNumThreads: spec.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const input of spec.inputs) {
    const size = input.dims.reduce((a, b) => a * b, 1);
    let data;
    if (input.file) {
      const bytes = fs.readFileSync(input.file);
      if (bytes.length !== 4 * size) {
        throw new Error(`${input.file}: ${bytes.length} bytes, expected ${4 * size}`);
      }
      data = new Float32Array(bytes.buffer, bytes.byteOffset, size);
    } else {
      data = new Float32Array(size);
      for (let i = 0; i < size; ++i) data[i] = 2 * Math.random() - 1;
    }
    feeds[input.name] = new ort.Tensor('float32', data, input.dims);
  }
  let out = await session.run(feeds);  // warm-up
  if (spec.output_file) {
    const data = out[session.outputNames[0]].data;
    fs.writeFileSync(spec.output_file, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  const minReps = spec.min_reps ?? 3;
  const minSeconds = spec.min_seconds ?? 1.0;
  const times = [];
  const start = performance.now();
  while (times.length < minReps || (performance.now() - start) / 1e3 < minSeconds) {
    const t0 = performance.now();
    out = await session.run(feeds);
    times.push((performance.now() - t0) / 1e3);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  console.log(JSON.stringify({
    ort: version,
    seconds: median,
    min_seconds: times[0],
    reps: times.length,
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  }));
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message}`);
  process.exit(1);
});
