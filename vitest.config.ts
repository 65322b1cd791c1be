import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["**/*.test.ts"],
		exclude: ["**/node_modules/**", ".sst/**"],
		testTimeout: 60_000,
		hookTimeout: 60_000,
		// End-to-end suites spawn real processes and servers; two workers suit a 2-core machine.
		maxWorkers: 2,
		// The pinned AWS SDK warns about its future Node floor on every process; it changes nothing here.
		env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
	},
});
