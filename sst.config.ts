/// <reference path="./.sst/platform/config.d.ts" />

// AWS deployment: the components live in infra/*.ts. See docs/deploying.md › Deploying to AWS.
// SST evaluates this file itself: other files may only be imported inside run().
export default $config({
	app(input) {
		const production = input?.stage === "prod" || input?.stage === "production";
		return {
			name: "lisa",
			home: "aws",
			// A production stage keeps its table and logs when removed, and refuses accidental removal.
			removal: production ? "retain" : "remove",
			protect: production,
		};
	},
	async run() {
		const { LAMBDA_RUNTIME } = await import("./infra/config");
		$transform(sst.aws.Function, (args) => {
			args.runtime ??= LAMBDA_RUNTIME;
			// The functions are plain JavaScript: Graviton is cheaper per millisecond.
			args.architecture ??= "arm64";
		});
		await import("./infra/secrets");
		await import("./infra/storage");
		const { intake, events } = await import("./infra/queues");
		await import("./infra/agent");
		const { api } = await import("./infra/api");
		await import("./infra/pipeline");
		await import("./infra/cron");
		return {
			api: api.url,
			dashboard: api.url,
			linearWebhook: $interpolate`${api.url}/webhooks/linear`,
			githubWebhook: $interpolate`${api.url}/webhooks/github`,
			trelloWebhook: $interpolate`${api.url}/webhooks/trello`,
			intakeDlq: intake.dlq.url,
			eventsDlq: events.dlq.url,
		};
	},
});
