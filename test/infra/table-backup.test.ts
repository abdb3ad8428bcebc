import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, test } from 'vitest';
import { SwitchyardTable } from '../../infra/constructs/table.js';
import { TableBackup } from '../../infra/constructs/table-backup.js';
import { readSettings } from '../../infra/settings.js';
import { assertAwsRules } from './aws-rules.js';
import { type CfnResource, renderValue, resourcesOfType } from './template-queries.js';

function propertiesOf(resource: CfnResource | undefined): Record<string, unknown> {
  if (!resource?.Properties) throw new Error('a resource without properties');
  return resource.Properties;
}

const COPY_VAULT = 'arn:aws:backup:eu-central-1:123456789012:backup-vault:switchyard-copies';
const settingsOf = (context: Record<string, unknown>) => readSettings(new App({ context }).node);

/** The table and its backup alone: what -c backup=true adds to the stack, without the functions to bundle. */
function backedUp(context: Record<string, unknown>) {
  const app = new App();
  const stack = new Stack(app, 'Switchyard');
  const store = new SwitchyardTable(stack, 'Store', { destroy: false });
  const settings = settingsOf(context);
  new TableBackup(stack, 'Backup', {
    table: store.table,
    stackName: 'Switchyard',
    settings: settings.backup,
    destroy: false,
  });
  const template = Template.fromStack(stack);
  const file = join(app.outdir, stack.templateFile);
  writeFileSync(file, JSON.stringify(template.toJSON()));
  return { app, template, file };
}

describe('TableBackup (-c backup=true)', { timeout: 60_000 }, () => {
  test('off by default; the retention and the copy vault are checked', () => {
    expect(settingsOf({}).backup).toEqual({ enabled: false, retentionDays: 35 });
    expect(
      settingsOf({ backup: 'true', backupRetentionDays: '90', backupCopyVaultArn: COPY_VAULT }).backup,
    ).toEqual({
      enabled: true,
      retentionDays: 90,
      copyVaultArn: COPY_VAULT,
    });
    expect(() => settingsOf({ backupCopyVaultArn: 'switchyard-copies' })).toThrow(
      /-c backupCopyVaultArn=switchyard-copies: expected a backup vault ARN/,
    );
  });

  test('backs the table up daily into a retained vault, kept 35 days, each backup copied to the other region', () => {
    const { template, file, app } = backedUp({ backup: 'true', backupCopyVaultArn: COPY_VAULT });
    const [plan] = Object.values(resourcesOfType(template, 'AWS::Backup::BackupPlan'));
    const rule = (propertiesOf(plan).BackupPlan as { BackupPlanRule: Record<string, unknown>[] })
      .BackupPlanRule[0];
    expect(rule).toMatchObject({
      ScheduleExpression: 'cron(0 5 * * ? *)',
      Lifecycle: { DeleteAfterDays: 35 },
      CopyActions: [{ DestinationBackupVaultArn: COPY_VAULT, Lifecycle: { DeleteAfterDays: 35 } }],
    });
    const [vault] = Object.values(resourcesOfType(template, 'AWS::Backup::BackupVault'));
    expect(vault?.DeletionPolicy).toBe('Retain');
    const [selection] = Object.values(resourcesOfType(template, 'AWS::Backup::BackupSelection'));
    const resources = (propertiesOf(selection).BackupSelection as { Resources: unknown[] }).Resources.map(
      renderValue,
    );
    expect(resources).toEqual([expect.stringMatching(/^<StoreTable[A-Z0-9]+\.Arn>$/)]);
    // AWS's own rules and cdk-nag hold for what it adds.
    assertAwsRules('-c backup=true (the table and its backup)', file);
    const report = new AwsSolutionsChecks().validateScope(app);
    expect(
      report.violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`),
      ),
    ).toEqual([]);
  });
});
