/**
 * Named sets of settings (`-c profile=NAME`): each value is the setting's default under that profile,
 * so a setting given with `-c` (or in cdk.json) still wins. Keys are the `-c` keys of infra/settings.ts.
 */
export const PROFILES = {
  /** docs/deploying.md, "Production checklist": what a production stack should not do without. */
  production: {
    // RabbitMQ on Amazon MQ has no active/standby mode: a three-node cluster across zones, whose quorum
    // reply queue survives the loss of a node.
    brokerDeploymentMode: 'CLUSTER_MULTI_AZ',
    brokerInstanceType: 'mq.m7g.large',
    // Four reply lanes: Amazon MQ's mapping runs one invocation at a time per queue (BENCHMARKS.md).
    mqReplyQueues: 4,
    // The table is retained with deletion protection and point-in-time recovery, the logs kept.
    destroy: false,
    logRetentionDays: 90,
    apiReservedConcurrency: 100,
    repliesMaxConcurrency: 20,
    timersMaxConcurrency: 5,
    deadLettersMaxConcurrency: 2,
    // A new version of the API and replies functions takes 10% of their traffic for 5 minutes first.
    canaryDeployments: true,
    // One shared API key is the root of every namespace: a production stack hands out scoped tokens.
    auth: 'token',
  },
} as const satisfies Record<string, Record<string, string | number | boolean>>;

export type ProfileName = keyof typeof PROFILES;

/** The settings a profile gives, by `-c` key; none without a profile. */
export function profileDefaults(profile: ProfileName | undefined): Record<string, unknown> {
  return profile ? PROFILES[profile] : {};
}
