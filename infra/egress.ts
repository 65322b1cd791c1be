import { readFileSync } from "node:fs";
import { deployEgressAllowList } from "../src/config/egress";

// LISA_AGENT_EGRESS=allow-list (docs/deploying.md › The agent's egress): Fargate gives a task
// no NET_ADMIN and no namespaces of its own, so the network around the task does the confining. The
// agent tasks run in private subnets without a NAT route; AWS is reached through VPC endpoints; every
// other host through a small proxy service in a public subnet that allows only the list; and the
// VPC's resolver answers only the names on it. Type-checked here, not deployed from here.

/** The proxy's port, inside the VPC. */
const PROXY_PORT = 3128;
/** What AWS the task reaches through interface endpoints: the queue, the image, logs, its secrets. */
const INTERFACE_ENDPOINTS = ["sqs", "ecr.api", "ecr.dkr", "logs", "ssm"];
/** And through gateway endpoints (free): the table, and S3 for the image's layers. */
const GATEWAY_ENDPOINTS = ["dynamodb", "s3"];

export interface AgentEgress {
	/** Where the tasks run, and with which security group: no public IP. */
	subnets: sst.aws.Vpc["privateSubnets"];
	securityGroups: $util.Output<string>[];
	/** The task's variables that send its traffic (and the agent's) through the proxy. */
	environment: Record<string, $util.Input<string>>;
}

export function agentEgress(
	vpc: sst.aws.Vpc,
	cluster: sst.aws.Cluster,
	configFile: string,
): AgentEgress {
	const allow = deployEgressAllowList(readFileSync(configFile, "utf8"), configFile, process.env);
	const region = aws.getRegionOutput().region;
	const cidr = vpc.nodes.vpc.cidrBlock;

	const proxy = new sst.aws.Service("EgressProxy", {
		cluster,
		image: { context: ".", dockerfile: "Dockerfile.agent" },
		command: ["egress-proxy"],
		cpu: "0.25 vCPU",
		memory: "0.5 GB",
		environment: { LISA_EGRESS_ALLOW: allow.join(","), LISA_EGRESS_PORT: String(PROXY_PORT) },
	});

	const endpoints = new aws.ec2.SecurityGroup("AgentEndpoints", {
		vpcId: vpc.id,
		ingress: [{ protocol: "tcp", fromPort: 443, toPort: 443, cidrBlocks: [cidr] }],
	});
	for (const service of INTERFACE_ENDPOINTS)
		new aws.ec2.VpcEndpoint(`AgentEndpoint${service.replace(/\W/g, "")}`, {
			vpcId: vpc.id,
			serviceName: $interpolate`com.amazonaws.${region}.${service}`,
			vpcEndpointType: "Interface",
			privateDnsEnabled: true,
			subnetIds: vpc.privateSubnets,
			securityGroupIds: [endpoints.id],
		});
	const gateways = GATEWAY_ENDPOINTS.map(
		(service) =>
			new aws.ec2.VpcEndpoint(`AgentEndpoint${service}`, {
				vpcId: vpc.id,
				serviceName: $interpolate`com.amazonaws.${region}.${service}`,
				vpcEndpointType: "Gateway",
				routeTableIds: vpc.nodes.privateRouteTables.apply((tables) => tables.map((t) => t.id)),
			}),
	);

	// Out of the task: the proxy and the interface endpoints in the VPC, the gateways' prefix lists.
	const tasks = new aws.ec2.SecurityGroup("AgentTasks", {
		vpcId: vpc.id,
		egress: [
			{ protocol: "tcp", fromPort: PROXY_PORT, toPort: PROXY_PORT, cidrBlocks: [cidr] },
			{ protocol: "tcp", fromPort: 443, toPort: 443, cidrBlocks: [cidr] },
			{
				protocol: "tcp",
				fromPort: 443,
				toPort: 443,
				prefixListIds: gateways.map((g) => g.prefixListId),
			},
		],
	});

	// The resolver answers the names on the list, AWS's and the VPC's own (the proxy's Cloud Map
	// name); every other name is NXDOMAIN, so DNS carries nothing out either.
	const names = [
		...new Set(allow.map((h) => h.replace(/:\d+$/, ""))),
		"*.amazonaws.com",
		$interpolate`*.${vpc.nodes.cloudmapNamespace.name}`,
	];
	const allowed = new aws.route53.ResolverFirewallDomainList("EgressNames", { domains: names });
	const everything = new aws.route53.ResolverFirewallDomainList("EgressAnyName", {
		domains: ["*"],
	});
	const group = new aws.route53.ResolverFirewallRuleGroup("EgressDns", {});
	new aws.route53.ResolverFirewallRule("EgressDnsAllow", {
		firewallRuleGroupId: group.id,
		firewallDomainListId: allowed.id,
		action: "ALLOW",
		priority: 100,
	});
	new aws.route53.ResolverFirewallRule("EgressDnsBlock", {
		firewallRuleGroupId: group.id,
		firewallDomainListId: everything.id,
		action: "BLOCK",
		blockResponse: "NXDOMAIN",
		priority: 200,
	});
	new aws.route53.ResolverFirewallRuleGroupAssociation("EgressDnsVpc", {
		firewallRuleGroupId: group.id,
		vpcId: vpc.id,
		priority: 101,
	});

	const proxyUrl = $interpolate`http://${proxy.service}:${PROXY_PORT}`;
	const direct = ".amazonaws.com,169.254.169.254,169.254.170.2,localhost,127.0.0.1";
	return {
		subnets: vpc.privateSubnets,
		securityGroups: [tasks.id],
		environment: {
			HTTPS_PROXY: proxyUrl,
			HTTP_PROXY: proxyUrl,
			NO_PROXY: direct,
			// Node's own fetch and http follow these only when asked.
			NODE_USE_ENV_PROXY: "1",
		},
	};
}
