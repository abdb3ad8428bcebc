export { type LambdaWorkerOptions, lambdaWorker, type SqsWorkerFunction } from './lambda-worker.js';
