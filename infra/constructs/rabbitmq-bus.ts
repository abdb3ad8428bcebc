import { createHash } from 'node:crypto';
import { Fn, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as amazonmq from 'aws-cdk-lib/aws-amazonmq';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { BrokerSettings } from '../settings.js';
import type { FunctionNetwork } from './handler-function.js';

export const AMQPS_PORT = 5671;
/** The broker user the manager and the event source mapping log in as; its password is generated. */
export const BROKER_USERNAME = 'switchyard';

export interface RabbitMqBusProps {
  stackName: string;
  broker: BrokerSettings;
  /** X-Ray needs its own endpoint in a VPC without internet access. */
  tracing: boolean;
  destroy: boolean;
  logRetentionDays: number;
}

/**
 * The broker's name: the stack's, and a hash of the settings whose change makes CloudFormation
 * replace the broker (deployment mode, subnets). A fixed name would stop that replacement
 * (CloudFormation cannot replace a resource with a custom name); with the hash, the new broker is
 * created beside the old one, which is deleted after (docs/deploying.md, "Replacing the broker").
 * At most 50 characters, Amazon MQ's limit.
 */
export function brokerNameOf(stackName: string, broker: BrokerSettings, subnets: number): string {
  const replacing = JSON.stringify({
    mode: broker.deploymentMode,
    subnets: broker.deploymentMode === 'SINGLE_INSTANCE' ? 1 : subnets,
  });
  const hash = createHash('sha256').update(replacing).digest('hex').slice(0, 8);
  return `${stackName.slice(0, 32)}-rabbitmq-${hash}`;
}

/**
 * The RabbitMQ bus: an Amazon MQ for RabbitMQ broker, private, in a VPC of two isolated subnets that
 * reaches AWS services through VPC endpoints only (no NAT gateway, no internet route).
 */
export class RabbitMqBus extends Construct {
  readonly vpc: ec2.Vpc;
  readonly broker: amazonmq.CfnBroker;
  /** `{"username", "password"}`: the shape the Amazon MQ event source mapping reads. */
  readonly credentials: secretsmanager.Secret;
  /** The broker's own group; the event source mapping's network interfaces use it too. */
  readonly brokerSecurityGroup: ec2.SecurityGroup;
  /** For anything that talks AMQPS to the broker: the functions, and workers placed in this VPC. */
  readonly clientSecurityGroup: ec2.SecurityGroup;
  readonly amqpsEndpoint: string;
  readonly consoleUrl: string;
  /** The broker's name: the `Broker` dimension of its CloudWatch metrics. */
  readonly brokerName: string;

  constructor(scope: Construct, id: string, props: RabbitMqBusProps) {
    super(scope, id);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'private', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 }],
      // Nothing uses the default group; locking it down would add a CDK custom resource function.
      restrictDefaultSecurityGroup: false,
    });
    this.addFlowLog(props);

    this.brokerSecurityGroup = new ec2.SecurityGroup(this, 'BrokerSecurityGroup', {
      vpc: this.vpc,
      description: 'Amazon MQ broker and the Lambda event source mapping that polls it',
      allowAllOutbound: false,
    });
    this.clientSecurityGroup = new ec2.SecurityGroup(this, 'ClientSecurityGroup', {
      vpc: this.vpc,
      description: 'Clients of the Amazon MQ broker (AMQPS) and of the AWS service endpoints',
      allowAllOutbound: false,
    });
    const amqps = ec2.Port.tcp(AMQPS_PORT);
    const https = ec2.Port.tcp(443);
    // The subnets have no internet route: 443 reaches only the VPC endpoints (DynamoDB's is a gateway
    // endpoint on public addresses, hence any address rather than the VPC's range).
    for (const group of [this.brokerSecurityGroup, this.clientSecurityGroup]) {
      group.addEgressRule(ec2.Peer.anyIpv4(), https, 'AWS service endpoints');
      group.addEgressRule(this.brokerSecurityGroup, amqps, 'AMQPS to the broker');
    }
    this.brokerSecurityGroup.addIngressRule(this.clientSecurityGroup, amqps, 'AMQPS from clients');
    this.brokerSecurityGroup.addIngressRule(
      this.brokerSecurityGroup,
      amqps,
      'AMQPS from the event source mapping',
    );
    this.addEndpoints(props.tracing);

    this.credentials = new secretsmanager.Secret(this, 'Credentials', {
      description: `Amazon MQ broker user of ${props.stackName}`,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ username: BROKER_USERNAME }),
        generateStringKey: 'password',
        // Amazon MQ refuses , : = in passwords; no punctuation at all keeps AMQP URLs simple too.
        excludePunctuation: true,
        passwordLength: 32,
      },
      removalPolicy: props.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    Validations.of(this.credentials).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Amazon MQ keeps its own copy of the broker password and Secrets Manager has no rotation function for it: a rotated secret would lock the manager out. Change it with a stack update.',
    });

    const isolated = this.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_ISOLATED }).subnetIds;
    this.brokerName = brokerNameOf(props.stackName, props.broker, isolated.length);
    this.broker = new amazonmq.CfnBroker(this, 'Broker', {
      brokerName: this.brokerName,
      engineType: 'RABBITMQ',
      engineVersion: props.broker.engineVersion,
      hostInstanceType: props.broker.instanceType,
      deploymentMode: props.broker.deploymentMode,
      publiclyAccessible: false,
      autoMinorVersionUpgrade: true,
      subnetIds: props.broker.deploymentMode === 'SINGLE_INSTANCE' ? isolated.slice(0, 1) : isolated,
      securityGroups: [this.brokerSecurityGroup.securityGroupId],
      encryptionOptions: { useAwsOwnedKey: true },
      logs: { general: true },
      users: [
        {
          username: BROKER_USERNAME,
          // A CloudFormation dynamic reference: the template holds the secret's ARN, never the password.
          password: this.credentials.secretValueFromJson('password').unsafeUnwrap(),
          consoleAccess: true,
        },
      ],
    });
    this.amqpsEndpoint = Fn.select(0, this.broker.attrAmqpEndpoints);
    this.consoleUrl = Fn.select(0, this.broker.attrConsoleUrLs);
  }

  /** Where the functions that publish over AMQPS run. */
  get functionNetwork(): FunctionNetwork {
    return {
      vpc: this.vpc,
      subnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      securityGroups: [this.clientSecurityGroup],
    };
  }

  private addFlowLog(props: RabbitMqBusProps): void {
    const logGroup = new logs.LogGroup(this, 'FlowLogs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });
    // Rejected traffic only: what explains a connection that does not work, at a fraction of ALL's volume.
    this.vpc.addFlowLog('FlowLog', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(logGroup),
      trafficType: ec2.FlowLogTrafficType.REJECT,
    });
  }

  /**
   * DynamoDB through a free gateway endpoint; SQS (timer queue), Secrets Manager (broker password,
   * read by the functions and by the event source mapping), Lambda (the event source mapping
   * invokes the replies function from the broker's subnets) and EventBridge Scheduler (registering
   * a workflow writes its schedules, each tick re-arms its own) through interface endpoints.
   */
  private addEndpoints(tracing: boolean): void {
    const subnets = { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
    // Reachable from the functions and from the event source mapping (broker group), nothing else.
    const endpointSecurityGroup = new ec2.SecurityGroup(this, 'EndpointSecurityGroup', {
      vpc: this.vpc,
      description: 'VPC interface endpoints of the Switchyard functions and event source mapping',
      allowAllOutbound: false,
    });
    for (const client of [this.clientSecurityGroup, this.brokerSecurityGroup]) {
      endpointSecurityGroup.addIngressRule(client, ec2.Port.tcp(443), 'HTTPS to AWS services');
    }
    this.vpc.addGatewayEndpoint('DynamoDb', {
      service: ec2.GatewayVpcEndpointAwsService.DYNAMODB,
      subnets: [subnets],
    });
    const services: Record<string, ec2.InterfaceVpcEndpointAwsService> = {
      Sqs: ec2.InterfaceVpcEndpointAwsService.SQS,
      SecretsManager: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
      Lambda: ec2.InterfaceVpcEndpointAwsService.LAMBDA,
      // CDK has no constant for it: com.amazonaws.<region>.scheduler (Scheduler supports PrivateLink).
      Scheduler: new ec2.InterfaceVpcEndpointAwsService('scheduler'),
    };
    if (tracing) services.XRay = ec2.InterfaceVpcEndpointAwsService.XRAY;
    for (const [name, service] of Object.entries(services)) {
      this.vpc.addInterfaceEndpoint(name, {
        service,
        subnets,
        privateDnsEnabled: true,
        securityGroups: [endpointSecurityGroup],
        open: false,
      });
    }
  }
}
