// ONNX Runtime latency of the shared models, for bench/models_vs_ort.sh.
//
//   node bench/ort_models.mjs MODELS_DIR THREADS[,THREADS...] REPEAT MODEL...
//
// Prints one line per (model, threads): "MODEL THREADS MEDIAN_MS MIN_MS", the form
// bench/models reads with --ort FILE. Each session: CPU provider, all graph
// optimizations, sequential execution, intra-op threads as given; 10 warm-up runs, then
// REPEAT timed runs on the shared input (input_1x3x224x224.f32, else a fixed pattern).
import * as ort from 'onnxruntime-node';
import fs from 'fs';
import path from 'path';

const [dir, threadList, repeatArg, ...models] = process.argv.slice(2);
if (!dir || !threadList || !repeatArg || models.length === 0) {
  console.error('usage: node ort_models.mjs MODELS_DIR THREADS[,THREADS] REPEAT MODEL...');
  process.exit(2);
}
const repeat = Math.max(1, parseInt(repeatArg, 10));
const n = 1 * 3 * 224 * 224;
let pixels = new Float32Array(n);
const inputFile = path.join(dir, 'input_1x3x224x224.f32');
if (fs.existsSync(inputFile)) {
  const buf = fs.readFileSync(inputFile);
  pixels = new Float32Array(buf.buffer, buf.byteOffset, n).slice();
} else {
  for (let i = 0; i < n; i++) pixels[i] = ((i * 2654435761) % 1000) / 500 - 1;
}
for (const model of models) {
  for (const threads of threadList.split(',').map(Number)) {
    const session = await ort.InferenceSession.create(path.join(dir, `${model}.onnx`), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    });
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', pixels, [1, 3, 224, 224])};
    for (let i = 0; i < 10; i++) await session.run(feeds);
    const t = [];
    for (let i = 0; i < repeat; i++) {
      const a = process.hrtime.bigint();
      await session.run(feeds);
      t.push(Number(process.hrtime.bigint() - a) / 1e6);
    }
    t.sort((a, b) => a - b);
    const median = repeat % 2 ? t[(repeat - 1) / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
    console.log(`${model} ${threads} ${median.toFixed(3)} ${t[0].toFixed(3)}`);
    await session.release();
  }
}
