import { AGENT_SECRETS, LINK } from "../src/config/links";
import { TASK_WRITABLE } from "../src/store/dynamo/table";
import { deployConfig } from "./config";
import { agentEgress } from "./egress";
import { events } from "./queues";
import { agentSecrets, githubApp, hasValue, secrets } from "./secrets";
import { table } from "./storage";

// The agent task (docs/agent-task.md › The agent task): one Fargate task per repository step, built
// from Dockerfile.agent.

const config = deployConfig(process.env);

/**
 * Public subnets and no NAT: each task gets a public IP for git, the code host and the LLM APIs;
 * with LISA_AGENT_EGRESS=allow-list the tasks run in the private subnets instead (infra/egress.ts).
 */
export const vpc = new sst.aws.Vpc("Vpc");
export const cluster = new sst.aws.Cluster("Cluster", { vpc });
const egress =
	config.agent.egress === "allow-list" ? agentEgress(vpc, cluster, config.configFile) : undefined;

/**
 * The task's credentials, as SSM SecureStrings that ECS injects when the container starts: they
 * never appear in the task definition or in RunTask overrides. GithubToken (unless Lisa is a GitHub
 * App: then each step's token is minted for it and taken from the table) and the agent keys that are set.
 */
const taskSecrets = [
	...(githubApp() ? [] : [["GithubToken", "GITHUB_TOKEN", secrets.GithubToken] as const]),
	...Object.entries(AGENT_SECRETS)
		.filter(([name]) => hasValue(name))
		.map(
			([name, variable]) =>
				[name, variable, agentSecrets[name as keyof typeof AGENT_SECRETS]] as const,
		),
];

const ssm = Object.fromEntries(
	taskSecrets.map(([name, variable, secret]) => [
		variable,
		new aws.ssm.Parameter(`AgentSecret${name}`, { type: "SecureString", value: secret.value }).arn,
	]),
);

/**
 * What a task may touch. IAM cannot scope a shared role to the one run a task was started for (the
 * run id exists only at launch), so the role allows what any task may do: read run items; update
 * only their `steps` attribute (heartbeats, agent state, report); create timeline entries and the
 * repo's guardrails with UpdateItem (the store never uses PutItem for them, so no item can be
 * replaced); read and trim guardrails; take a minted step token — no locks, deliveries, run status
 * or Scan — and send to the events queue. The run and attempt are checked by the store's conditional writes and the handlers.
 */
const leadingKeys = (...values: string[]) => ({
	test: "ForAllValues:StringLike",
	variable: "dynamodb:LeadingKeys",
	values,
});
const onlyAttributes = (...values: string[]) => ({
	test: "ForAllValues:StringEquals",
	variable: "dynamodb:Attributes",
	values: ["pk", "sk", ...values],
});
export const agent = new sst.aws.Task("Agent", {
	cluster,
	image: { context: ".", dockerfile: "Dockerfile.agent" },
	architecture: config.agent.architecture,
	cpu: config.agent.cpu,
	memory: config.agent.memory,
	storage: config.agent.storage,
	environment: {
		LOG_LEVEL: config.logLevel,
		...(config.llm.baseUrl ? { LISA_LLM_BASE_URL: config.llm.baseUrl } : {}),
		...(config.llm.model ? { LISA_LLM_MODEL: config.llm.model } : {}),
		...egress?.environment,
	},
	ssm,
	permissions: [
		{ actions: ["dynamodb:GetItem"], resources: [table.arn], conditions: [leadingKeys("RUN#*")] },
		{
			actions: ["dynamodb:UpdateItem"],
			resources: [table.arn],
			conditions: [leadingKeys("RUN#*"), onlyAttributes(...TASK_WRITABLE.run)],
		},
		{
			actions: ["dynamodb:UpdateItem"],
			resources: [table.arn],
			conditions: [leadingKeys("REPO#*"), onlyAttributes(...TASK_WRITABLE.guardrail)],
		},
		{
			actions: ["dynamodb:Query", "dynamodb:DeleteItem"],
			resources: [table.arn],
			conditions: [leadingKeys("REPO#*")],
		},
		// Its step's minted token, taken with one DeleteItem.
		{
			actions: ["dynamodb:DeleteItem"],
			resources: [table.arn],
			conditions: [leadingKeys("TOKEN#*")],
		},
		{ actions: ["sqs:SendMessage"], resources: [events.queue.arn] },
	],
	logging: { retention: config.logRetention },
	// `sst dev` deploys the real task; locally `npm start` runs it as a child process instead.
	dev: false,
});

const clusterArn = cluster.nodes.cluster.arn;
const tasksOfCluster = clusterArn.apply((arn) => `${arn.replace(":cluster/", ":task/")}/*`);
const link = agent.getSSTLink().properties;

/** How the handlers start, watch and stop tasks, with exactly the ECS rights that takes. */
export const agentLink = new sst.Linkable(LINK.agent, {
	properties: {
		cluster: link.cluster,
		taskDefinition: link.taskDefinition,
		container: link.containers.apply((names) => names[0]),
		subnets: egress?.subnets ?? link.subnets,
		securityGroups: egress?.securityGroups ?? link.securityGroups,
		assignPublicIp: egress ? false : link.assignPublicIp,
		capacity: config.agent.capacity,
		// What a second of a task costs is priced from its size (docs/cost.md › Cost and budgets).
		vcpu: Number.parseFloat(config.agent.cpu),
		memoryGb: Number.parseFloat(config.agent.memory),
	},
	include: [
		sst.aws.permission({
			actions: ["ecs:RunTask"],
			resources: [agent.taskDefinition],
			conditions: [{ test: "ArnEquals", variable: "ecs:cluster", values: [clusterArn] }],
		}),
		sst.aws.permission({
			actions: ["ecs:StopTask", "ecs:DescribeTasks"],
			resources: [tasksOfCluster],
		}),
		// RunTask with tags needs the right to tag the task it creates.
		sst.aws.permission({
			actions: ["ecs:TagResource"],
			resources: [tasksOfCluster],
			conditions: [{ test: "StringEquals", variable: "ecs:CreateAction", values: ["RunTask"] }],
		}),
		sst.aws.permission({
			actions: ["iam:PassRole"],
			resources: [agent.nodes.taskRole.arn, agent.nodes.executionRole.arn],
			conditions: [
				{
					test: "StringEquals",
					variable: "iam:PassedToService",
					values: ["ecs-tasks.amazonaws.com"],
				},
			],
		}),
	],
});
