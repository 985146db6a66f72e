// Each wasm module's interface against the page's TypeScript (web/src/lib): the options
// every method takes are declared once in its bindings file (an Options constant,
// wasm/json_args.hpp), read here from the files wasm/CMakeLists.txt compiles into each
// module; the TypeScript type the page passes to each method must name exactly those options, and
// the JSON each method answers, run under Node on the shipped Shakespeare model or the
// seeded tiny model, must have every field its TypeScript result type requires and no
// field the type does not declare. Every module of wasm/CMakeLists.txt is listed below:
// a module or method without a declared TypeScript type fails. The types are read by
// TypeScript's checker (web/'s dev dependency), so an alias, an intersection or
// Parameters<...> resolves as the page's compiler resolves it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadCore, loadJudge, loadKernelChecks, loadNotebook, loadTraceViewer, loadTrain, loadTrained } from '../../wasm/load-node.mjs';
import { safetensorsHeader } from '../../web/src/lib/safetensors.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const lib = path.join(repo, 'web', 'src', 'lib');
const shakespeare = path.join(repo, 'web', 'public', 'models', 'shakespeare');

// For each method that takes an options object, the TypeScript type of what the page
// passes (an expression over web/src/lib's exports). The stream session is in two modules.
const streamSession = {
  'StreamSession.run': "Parameters<RawStreamSession['run']>[0]",
  'StreamSession.tokens': "Parameters<RawStreamSession['tokens']>[0]",
  'StreamSession.referenceLosses': "Parameters<RawStreamSession['referenceLosses']>[0]",
  'StreamSession.referenceContinuation': "Parameters<RawStreamSession['referenceContinuation']>[0]",
  'StreamSession.attachReference': "Parameters<RawStreamSession['attachReference']>[0]",
  'StreamSession.headScores': "Parameters<RawStreamSession['headScores']>[0]",
  'StreamSession.check': "Parameters<RawStreamSession['check']>[0]",
};
const modules = {
  attention_core: {
    load: loadCore,
    options: {
      forward: 'ForwardOptions',
      'CheckpointSession.forward': "Parameters<RawCheckpoint['forward']>[1]",
      ropeAngles: "Parameters<Core['ropeAngles']>[0]",
      ropeRotate: "Parameters<Core['ropeRotate']>[0]",
      ropeScores: "Parameters<Core['ropeScores']>[0]",
    },
  },
  attention_notebook: {
    load: loadNotebook,
    options: {
      softLookup: "Parameters<Core['softLookup']>[0]",
      attentionCost: "Parameters<Core['attentionCost']>[0]",
      DecodeSession: "ConstructorParameters<NonNullable<RawCore['DecodeSession']>>[0]",
      'DecodeSession.prefill': "Parameters<RawDecodeSession['prefill']>[0]",
      'DecodeSession.step': "Parameters<RawDecodeSession['step']>[0]",
      'DecodeSession.append': "Parameters<RawDecodeSession['append']>[0]",
      ...streamSession,
    },
  },
  attention_trained: {
    load: loadTrained,
    options: {
      'TrainedSession.encode': "Parameters<RawTrainedSession['encode']>[0]",
      'TrainedSession.decode': "Parameters<RawTrainedSession['decode']>[0]",
      'TrainedSession.extend': "Parameters<RawTrainedSession['extend']>[0]",
      'TrainedSession.headPatterns': "Parameters<RawTrainedSession['headPatterns']>[0]",
      'TrainedSession.probe': "Parameters<RawTrainedSession['probe']>[0]",
      'TrainedSession.checks': "Parameters<RawTrainedSession['checks']>[0]",
      ...streamSession,
    },
  },
  attention_train: {
    load: loadTrain,
    options: { 'TrainingSession.start': 'TrainingOptions' },
    // trainingBits is called by tests/wasm/training_bits.test.mjs only, not by the page.
    notByThePage: ['trainingBits'],
  },
  attention_trace_viewer: {
    load: loadTraceViewer,
    options: { diff: 'DiffOptions', checkpointConfig: 'SeedOptions', exportCheckpoint: 'SeedOptions', trace: 'TraceOptions', verify: 'TraceOptions' },
  },
  // The judge's functions take strings (an exercise's name, its outputs as JSON).
  attention_judge: { load: loadJudge, options: {} },
  attention_kernel_checks: {
    load: loadKernelChecks,
    options: {
      checkTileRecord: "Parameters<KernelChecks['checkTileRecord']>[1]",
      DeviceSuite: "Parameters<KernelChecks['deviceSuite']>[0]",
      figureCase: 'FigureCase',
      'figureCase.shape': "FigureCase['shape']",
      rowSteps: "Parameters<KernelChecks['rowSteps']>[1]",
    },
  },
};
// Modules the page's TypeScript does not call through options objects.
const withoutOptions = {
  attention_first_layer: 'plain C exports taking numbers and pointers (web/src/lib/first-layer-call.mjs, tests/wasm/first-layer.test.mjs)',
  attention_bench: 'the CPU benchmark, for tools/bench-wasm.mjs and the cost figure\'s worker: options as JSON text, which core/bench reads (bench_options_from_json)',
};

const imports = `
import type { Core, RawCore, RawDecodeSession, ForwardOptions, TraceOptions } from './core';
import type { RawCheckpoint } from './checkpoint-core';
import type { RawSession as RawStreamSession, StreamReport, StreamModelInfo, ReferencePart, HeadScores, StreamOptionProblem } from './stream-core';
import type { RawSession as RawTrainedSession, TrainedSession } from './trained-core';
import type { TrainingOptions } from './train-core';
import type { DiffOptions, SeedOptions, TraceViewerModule } from './trace-viewer-core';
import type { Judge } from './judge-core';
import type { FigureCase, KernelChecks, SuiteRound } from './kernel-checks-core';
`;

/** Each expression's property names, and which of them are optional, as TypeScript's checker sees them. */
function typeProperties(expressions) {
  const ts = createRequire(path.join(repo, 'web', 'package.json'))('typescript');
  const file = path.join(lib, 'interface-check.virtual.ts');
  const names = expressions.map((_, k) => `T${k}`);
  const source = imports + expressions.map((e, k) => `export type ${names[k]} = ${e};\n`).join('');
  const options = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true, noEmit: true, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) => name === file ? ts.createSourceFile(name, source, version, true) : getSourceFile(name, version);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const checker = program.getTypeChecker();
  const sourceFile = program.getSourceFile(file);
  const semantic = ts.getPreEmitDiagnostics(program, sourceFile).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  assert.deepEqual(semantic, [], 'the declared TypeScript types resolve');
  const out = {};
  for (const statement of sourceFile.statements) {
    if (!ts.isTypeAliasDeclaration(statement)) continue;
    const k = names.indexOf(statement.name.text);
    const type = checker.getNonNullableType(checker.getTypeAtLocation(statement.name));
    const properties = checker.getPropertiesOfType(type);
    assert.ok(properties.length > 0 || /\{\s*\}/.test(expressions[k]), `${expressions[k]} resolves to a type with properties`);
    out[expressions[k]] = {
      names: properties.map((p) => p.name).sort(),
      optional: properties.filter((p) => (p.flags & ts.SymbolFlags.Optional) !== 0).map((p) => p.name).sort(),
    };
  }
  return out;
}

// ---------------------------------------------------------------- results

// Each run's TypeScript result type; resultRuns() makes the runs.
const results = {
  'attention_core forward': { type: "ReturnType<Core['forward']>" },
  'attention_core config': { type: "ReturnType<Core['config']>" },
  'attention_core cachePayload': { type: "ReturnType<Core['cachePayload']>" },
  'attention_core buildInfo': { type: "ReturnType<Core['buildInfo']>" },
  'attention_core ropeAngles': { type: "ReturnType<Core['ropeAngles']>" },
  'attention_core ropeRotate': { type: "ReturnType<Core['ropeRotate']>" },
  'attention_core ropeScores': { type: "ReturnType<Core['ropeScores']>" },
  'attention_notebook softLookup': { type: "ReturnType<Core['softLookup']>" },
  'attention_notebook attentionCost': { type: "ReturnType<Core['attentionCost']>" },
  'attention_notebook DecodeSession.prefill': { type: "ReturnType<ReturnType<Core['decodeSession']>['prefill']>" },
  'attention_notebook DecodeSession.step': { type: "ReturnType<ReturnType<Core['decodeSession']>['step']>" },
  'attention_notebook StreamSession.loadCheckpoint': { type: 'StreamModelInfo' },
  'attention_notebook StreamSession.run': { type: 'StreamReport' },
  'attention_notebook StreamSession.run policy': { type: "StreamReport['policies'][number]" },
  'attention_notebook StreamSession.tokens': { type: '{ tokens: number; text_tokens: number }' },
  'attention_notebook StreamSession.referenceLosses': { type: 'ReferencePart & { from: number }' },
  'attention_notebook StreamSession.referenceContinuation': { type: "ReturnType<import('./stream-core').StreamSession['referenceContinuation']>" },
  'attention_notebook StreamSession.addReference': { type: 'StreamReport' },
  'attention_notebook StreamSession.headScores': { type: 'HeadScores' },
  'attention_notebook StreamSession.check': { type: 'StreamOptionProblem' },
  'attention_trace_viewer verify': { type: "ReturnType<TraceViewerModule['verify']>" },
  'attention_judge judgeCatalogue': { type: "ReturnType<Judge['judgeCatalogue']>[number]" },
  'attention_judge judgeCases': { type: "ReturnType<Judge['judgeCases']>" },
  'attention_kernel_checks kernelCases': { type: "ReturnType<KernelChecks['kernelCases']>[number]" },
  'attention_kernel_checks kernelInputs': { type: "ReturnType<KernelChecks['kernelInputs']>" },
  'attention_kernel_checks checkKernelOutput': { type: "ReturnType<KernelChecks['checkKernelOutput']>[number]" },
  'attention_kernel_checks checkTileRecord': { type: "ReturnType<KernelChecks['checkTileRecord']>[number]" },
  'attention_kernel_checks tileCounts': { type: "ReturnType<KernelChecks['tileCounts']>" },
  'attention_kernel_checks rowSteps': { type: "ReturnType<KernelChecks['rowSteps']>" },
  'attention_kernel_checks rowSteps step': { type: "ReturnType<KernelChecks['rowSteps']>['steps'][number]" },
  'attention_kernel_checks checkKernelSample': { type: "ReturnType<KernelChecks['checkKernelSample']>[number]" },
  'attention_kernel_checks DeviceSuite.run': { type: 'SuiteRound' },
};

/** The Options constants of one bindings file: {method: [option names]}. Every line that declares one must be in the one form. */
export function optionDeclarations(text, file) {
  const out = {};
  for (const line of text.split('\n').filter((l) => /^\s*const Options\b/.test(l))) {
    const found = /^const Options \w+\{"([\w.]+)", \{((?:"\w+"(?:, )?)*)\}\};$/.exec(line.trim());
    assert.ok(found, `${file}: an Options declaration not in the form const Options name{"method", {"a", "b"}};: ${line.trim()}`);
    out[found[1]] = [...found[2].matchAll(/"(\w+)"/g)].map((m) => m[1]);
  }
  return out;
}

/** Every module of wasm/CMakeLists.txt with the options its compiled files declare. */
function declaredInterfaces() {
  const cmake = fs.readFileSync(path.join(repo, 'wasm', 'CMakeLists.txt'), 'utf8');
  return Object.fromEntries([...cmake.matchAll(/^add_executable\((\w+)([^)]*)\)/gm)].map(([, name, body]) => {
    const files = body.split(/\s+/).filter((f) => f.endsWith('.cpp'));
    const options = {};
    for (const file of files) Object.assign(options, optionDeclarations(fs.readFileSync(path.join(repo, 'wasm', file), 'utf8'), file));
    return [name, options];
  }));
}

test('the declarations are read as written, and one in another form fails', () => {
  assert.deepEqual(optionDeclarations('const Options run_options{"StreamSession.run", {"text", "window"}};\nint x;', 'a.cpp'),
    { 'StreamSession.run': ['text', 'window'] });
  assert.throws(() => optionDeclarations('const Options run_options{"run", {"text",\n "window"}};', 'b.cpp'), /b\.cpp: an Options declaration not in the form/);
});

describe('one declared interface per wasm module', async () => {
  const interfaces = declaredInterfaces();
  const expressions = [...new Set(Object.values(modules).flatMap((m) => Object.values(m.options)))];
  const resultTypes = Object.values(results).map((r) => r.type);
  const types = typeProperties([...new Set([...expressions, ...resultTypes])]);

  test('every module wasm/CMakeLists.txt builds is listed', () => {
    const built = [...fs.readFileSync(path.join(repo, 'wasm', 'CMakeLists.txt'), 'utf8').matchAll(/^add_executable\((\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(built.sort(), [...Object.keys(modules), ...Object.keys(withoutOptions)].sort());
    for (const name of Object.keys(withoutOptions)) assert.deepEqual(interfaces[name], {}, `${name} declares options`);
  });

  for (const [name, module] of Object.entries(modules)) {
    test(`${name}: the page's TypeScript names exactly the options each method declares`, async () => {
      const declared = interfaces[name];
      const methods = Object.keys(declared).filter((m) => !(module.notByThePage ?? []).includes(m));
      assert.deepEqual(methods.sort(), Object.keys(module.options).sort(), `${name}: the methods with options, in C++ and in this test`);
      for (const method of methods) {
        const ts = types[module.options[method]];
        assert.deepEqual(ts.names, [...declared[method]].sort(), `${name} ${method}: ${module.options[method]} against the C++ declaration`);
      }
    });
  }

  test('each method\'s JSON has the fields its TypeScript result type declares, and no other', async () => {
    const runs = await resultRuns();
    for (const [what, { type }] of Object.entries(results)) {
      const value = runs[what];
      assert.ok(value && typeof value === 'object' && !Array.isArray(value), `${what}: an object`);
      const { names, optional } = types[type];
      if (!names.includes('error')) assert.equal(value.error, undefined, `${what}: ${value.error}`);
      const required = names.filter((n) => !optional.includes(n));
      const actual = Object.keys(value).sort();
      assert.deepEqual(actual.filter((k) => !names.includes(k)), [], `${what}: fields ${type} does not declare`);
      assert.deepEqual(required.filter((k) => !actual.includes(k)), [], `${what}: fields ${type} requires that the core left out`);
    }
  });
});

async function resultRuns() {
  const out = {};
  const core = await loadCore();
  const json = (text) => JSON.parse(text);
  out['attention_core forward'] = json(core.forward({ ids: [1, 2, 3], batch: 1, capture: true }));
  out['attention_core config'] = json(core.config('tiny'));
  out['attention_core cachePayload'] = json(core.cachePayload(out['attention_core config']));
  out['attention_core buildInfo'] = json(core.buildInfo());
  out['attention_core ropeAngles'] = json(core.ropeAngles({ head_dim: 4, theta: 10000, positions: [0, 1] }));
  out['attention_core ropeRotate'] = json(core.ropeRotate({ vector: [1, 0, 0, 1], positions: [0, 1], theta: 10000, pairing: 'half_split' }));
  out['attention_core ropeScores'] = json(core.ropeScores({ q: [1, 0, 0, 1], k: [0, 1, 1, 0], positions: [0, 1], theta: 10000, pairing: 'half_split' }));

  const notebook = await loadNotebook();
  out['attention_notebook softLookup'] = json(notebook.softLookup({ query: [1, 0], keys: [[1, 0], [0, 1]], values: [[1, 2], [3, 4]] }));
  out['attention_notebook attentionCost'] = json(notebook.attentionCost({ d: 64, T: 128, n_heads: 4, n_kv_heads: 2, bytes_per_scalar: 2 }));
  const decode = new notebook.DecodeSession({ seed: 1 });
  out['attention_notebook DecodeSession.prefill'] = json(decode.prefill({ tokens: [1, 2, 3] }));
  out['attention_notebook DecodeSession.step'] = json(decode.step({ token: 4 }));
  decode.delete();

  const stream = new notebook.StreamSession();
  const model = new Uint8Array(fs.readFileSync(path.join(shakespeare, 'model.safetensors')));
  out['attention_notebook StreamSession.loadCheckpoint'] = json(stream.loadCheckpoint(
    JSON.parse(fs.readFileSync(path.join(shakespeare, 'config.json'), 'utf8')), model, safetensorsHeader(model, 'model.safetensors').header,
    JSON.parse(fs.readFileSync(path.join(shakespeare, 'tokenizer.json'), 'utf8'))));
  const options = { text: 'First Citizen:\nBefore we proceed any further, hear me speak.\n'.repeat(3), window: 16, sinks: 2, length: 120, generate: 4 };
  out['attention_notebook StreamSession.run'] = json(stream.run({ ...options, reference: false }));
  out['attention_notebook StreamSession.run policy'] = out['attention_notebook StreamSession.run'].policies?.[0];
  out['attention_notebook StreamSession.tokens'] = json(stream.tokens(options));
  out['attention_notebook StreamSession.referenceLosses'] = json(stream.referenceLosses({ ...options, from: 0, to: 8 }));
  out['attention_notebook StreamSession.referenceContinuation'] = json(stream.referenceContinuation(options));
  out['attention_notebook StreamSession.addReference'] = json(stream.addReference());
  out['attention_notebook StreamSession.headScores'] = json(stream.headScores({ text: 'First Citizen:\nBefore we proceed' }));
  out['attention_notebook StreamSession.check'] = json(stream.check({ ...options, sinks: 16 }));
  stream.delete();

  const viewer = await loadTraceViewer();
  out['attention_trace_viewer verify'] = json(viewer.verify('{}'));
  const judge = await loadJudge();
  const catalogue = json(judge.judgeCatalogue());
  out['attention_judge judgeCatalogue'] = catalogue[0];
  out['attention_judge judgeCases'] = json(judge.judgeCases(catalogue[0].id));

  const kernels = await loadKernelChecks();
  const kernelCase = json(kernels.kernelCases())[0];
  out['attention_kernel_checks kernelCases'] = kernelCase;
  const inputs = kernels.kernelInputs(kernelCase.id);
  out['attention_kernel_checks kernelInputs'] = inputs;
  out['attention_kernel_checks checkKernelOutput'] = json(kernels.checkKernelOutput(kernelCase.id, 'zeros', new Float32Array(inputs.q.length), null))[0];
  const counts = json(kernels.tileCounts(kernelCase.id, 4, 4));
  out['attention_kernel_checks tileCounts'] = counts;
  out['attention_kernel_checks checkTileRecord'] = json(kernels.checkTileRecord(kernelCase.id, { tile_q: 4, tile_k: 4, batch: 0, head: 0, row: 0 },
    new Uint32Array(counts.rows * counts.cols), new Float32Array(counts.cols * 2)))[0];
  const figure = { shape: { B: 1, Hq: 1, Hkv: 1, T: 20, S: 20, D: 8 }, mask: { kind: 'sliding_window', T: 20, S: 20, window: 6 } };
  const steps = json(kernels.rowSteps(figure, { tile_k: 8, batch: 0, head: 0, row: 12 }));
  out['attention_kernel_checks rowSteps'] = steps;
  out['attention_kernel_checks rowSteps step'] = steps.steps[1];
  out['attention_kernel_checks checkKernelSample'] = json(kernels.checkKernelSample(figure, 'zeros', new Float32Array(160), 4))[0];
  const suite = new kernels.DeviceSuite({ sinks: false });
  out['attention_kernel_checks DeviceSuite.run'] = json(suite.run());
  suite.delete();
  return out;
}
