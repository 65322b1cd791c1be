/// <reference path="./.sst/platform/config.d.ts" />

// AWS deployment (DESIGN §11). The components live in infra/*.ts; see README › Deploying to AWS.
export default $config({
	app(input) {
		return {
			name: "lisa",
			home: "aws",
			removal: input?.stage === "production" ? "retain" : "remove",
			protect: input?.stage === "production",
		};
	},
	async run() {},
});
