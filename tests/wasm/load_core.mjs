// The tests' name for the Node loader, which lives in wasm/load-node.mjs.
export { loadBench, loadCore, loadTraceViewer, loadFirstLayer, loadNotebook, loadTrain, loadTrained, wasmDir } from '../../wasm/load-node.mjs';
