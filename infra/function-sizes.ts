/**
 * Memory and timeout per function, and the fan-out slice: plain numbers (no CDK), so that the
 * serverless simulation (test/e2e/serverless.test.ts) runs the handlers with the limits deployed.
 * The API's timeout stays under API Gateway's 29 s integration limit.
 */
export const FUNCTION_SIZES = {
  api: { memorySize: 1024, timeoutSeconds: 29 },
  replies: { memorySize: 1024, timeoutSeconds: 60 },
  timers: { memorySize: 512, timeoutSeconds: 60 },
  deadLetters: { memorySize: 512, timeoutSeconds: 60 },
  registerWorkflows: { memorySize: 512, timeoutSeconds: 120 },
} as const;

/**
 * Children a fan-out creates per transition at most, deployed (the engine's default, 10,000, overruns
 * a Lambda): 10,000 in one invocation made 11,553 AWS calls and took 25.7 to 57 s of the replies
 * function's 60 s on the emulators (issue 31). Each slice is also sized to the invocation's time left
 * (functions/manager/fan-out-pace.ts).
 */
export const DEPLOYED_FAN_OUT_SLICE = 1_000;
