import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { HandlerFunction } from '../../infra/constructs/handler-function.js';
import type { SynthesizedStack } from './synth-stack.js';
import { resourcesOfType } from './template-queries.js';

export interface FunctionAsset {
  /** The asset's directory in the synthesized app's output. */
  dir: string;
  files: string[];
}

/** The files of each handler function's asset, by construct id, as `cdk synth` staged them. */
export function assetsOf(synthesized: SynthesizedStack): Record<string, FunctionAsset> {
  const functions = resourcesOfType(synthesized.template, 'AWS::Lambda::Function');
  const assets: Record<string, FunctionAsset> = {};
  for (const child of synthesized.stack.node.children) {
    if (!(child instanceof HandlerFunction)) continue;
    const logicalId = synthesized.stack.getLogicalId(child.function.node.defaultChild as lambda.CfnFunction);
    const code = functions[logicalId]?.Properties?.Code as { S3Key?: string } | undefined;
    if (!code?.S3Key) throw new Error(`${child.node.id} has no asset`);
    const key = code.S3Key;
    const dir = join(synthesized.app.outdir, `asset.${key.replace(/\.zip$/, '')}`);
    assets[child.node.id] = { dir, files: existsSync(dir) ? readdirSync(dir).sort() : [] };
  }
  return assets;
}

/** The bundled handler, `index.mjs`. */
export function bundleText(asset: FunctionAsset | undefined): string {
  if (!asset) throw new Error('no such function');
  return readFileSync(join(asset.dir, 'index.mjs'), 'utf8');
}
