import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as backup from 'aws-cdk-lib/aws-backup';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import { Construct } from 'constructs';
import type { BackupSettings } from '../settings.js';

export interface TableBackupProps {
  table: dynamodb.ITable;
  stackName: string;
  settings: BackupSettings;
  destroy: boolean;
}

/**
 * `-c backup=true`: an AWS Backup plan of the table, daily at 05:00 UTC into a vault of the stack,
 * kept `backupRetentionDays`, and copied to `backupCopyVaultArn` (a vault in another region, or
 * account) when given, so that a regional loss leaves a recent copy elsewhere. Point-in-time
 * recovery (always on) covers the last 35 days in the region; restoring either: docs/deploying.md,
 * "Restoring the table".
 */
export class TableBackup extends Construct {
  readonly vault: backup.BackupVault;
  readonly plan: backup.BackupPlan;

  constructor(scope: Construct, id: string, props: TableBackupProps) {
    super(scope, id);
    const retention = Duration.days(props.settings.retentionDays);
    this.vault = new backup.BackupVault(this, 'Vault', {
      backupVaultName: `${props.stackName}-switchyard`,
      removalPolicy: props.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    const copyTo = props.settings.copyVaultArn
      ? backup.BackupVault.fromBackupVaultArn(this, 'CopyVault', props.settings.copyVaultArn)
      : undefined;
    this.plan = new backup.BackupPlan(this, 'Plan', {
      backupVault: this.vault,
      backupPlanRules: [
        new backup.BackupPlanRule({
          ruleName: 'Daily',
          scheduleExpression: events.Schedule.cron({ minute: '0', hour: '5' }),
          deleteAfter: retention,
          copyActions: copyTo ? [{ destinationBackupVault: copyTo, deleteAfter: retention }] : [],
        }),
      ],
    });
    const selection = this.plan.addSelection('Table', {
      resources: [backup.BackupResource.fromDynamoDbTable(props.table)],
    });
    Validations.of(selection).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        'AWS Backup takes the backups with the role AWS maintains for exactly that (AWSBackupServiceRolePolicyForBackup); its selection holds the table alone.',
    });
  }
}
