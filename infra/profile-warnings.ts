import type { SwitchyardSettings } from './settings.js';

export interface ProfileWarning {
  /** The id `cdk synth` prints with the warning (and `Annotations.acknowledgeWarning` takes). */
  id: string;
  message: string;
}

/**
 * What a `production` stack lacks though it synthesizes: warnings, not errors, since a pager may be
 * subscribed to the alarm topic by other means, and a setting given with `-c` is deliberate.
 */
export function profileWarnings(settings: SwitchyardSettings): ProfileWarning[] {
  if (settings.profile !== 'production') return [];
  const warnings: ProfileWarning[] = [];
  if (!settings.alarms.email) {
    warnings.push({
      id: 'switchyard:productionAlarmEmail',
      message:
        'profile=production without -c alarmEmail: the alarms notify the AlarmTopicArn topic, which nobody is subscribed to until you subscribe a pager or an address',
    });
  }
  if (settings.destroy) {
    warnings.push({
      id: 'switchyard:productionDestroy',
      message: 'profile=production with -c destroy=true: the table and logs are deleted with the stack',
    });
  }
  if (settings.api.auth === 'apiKey') {
    warnings.push({
      id: 'switchyard:productionApiKey',
      message:
        'profile=production with -c auth=apiKey: the one API key is admin of every namespace and cannot be scoped; -c auth=token hands each team a scoped token (docs/deploying.md, Scoped tokens)',
    });
  }
  if (settings.bus === 'rabbitmq' && settings.broker.deploymentMode === 'SINGLE_INSTANCE') {
    warnings.push({
      id: 'switchyard:productionSingleBroker',
      message:
        'profile=production with a single-instance broker: the bus stops during maintenance windows and with its host',
    });
  }
  return warnings;
}
