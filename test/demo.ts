import { runDemo } from "./demo/cli";

// `npm run demo` (README › Quick start): three issues through the whole local pipeline against the
// doubles, then the stack stays up for the dashboard and the CLI until Ctrl-C. Nothing leaves the machine.

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
process.exit(await runDemo(process.argv.slice(2)));
