import { API_FILES } from "../src/config/links";
import { BUNDLED_CONFIG, deployConfig, FUNCTIONS } from "./config";
import { eventsLink, intakeLink } from "./queues";
import { apiSecrets } from "./secrets";
import { tableLink } from "./storage";

// The one Hono app (src/functions/api.ts) behind an HTTP API: webhooks, the runs API and the dashboard.
// An HTTP API rather than a function URL, so the function can be told its own public URL.

const config = deployConfig(process.env);

export const api = new sst.aws.ApiGatewayV2("Api", {
	domain: config.domain,
	accessLog: { retention: config.logRetention },
});

/** Links to a dashboard run page and tracker comments point here. */
export const publicUrl = api.url;

api.route("$default", {
	handler: "src/functions/api.handler",
	timeout: `${FUNCTIONS.api.timeoutSeconds} seconds`,
	memory: `${FUNCTIONS.api.memoryMb} MB`,
	nodejs: { splitting: FUNCTIONS.api.splitting },
	link: [tableLink, intakeLink, eventsLink, ...apiSecrets],
	// The dashboard's modules and libraries are served from files beside the bundle, not inside it
	// (src/api/assets.ts).
	copyFiles: [
		{ from: config.configFile, to: BUNDLED_CONFIG },
		...API_FILES.map((file) => ({ from: file, to: file })),
	],
	environment: {
		LISA_PUBLIC_URL: publicUrl,
		LISA_CONFIG: BUNDLED_CONFIG,
		LOG_LEVEL: config.logLevel,
		LISA_CORS_ORIGINS: config.corsOrigins,
	},
});
