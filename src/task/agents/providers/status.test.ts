import { describe, expect, it } from "vitest";
import { isTransientStatus } from "../../../domain/transient";
import { TRANSIENT_ERROR_KINDS } from "../provider";
import { statusKind } from "./cli-provider";

describe("an agent API's HTTP status", () => {
	it("is worth another model exactly when the one transient-status rule says so, or the model is missing", () => {
		for (let status = 400; status < 600; status++) {
			const kind = statusKind(status);
			const transient = kind !== undefined && TRANSIENT_ERROR_KINDS.includes(kind);
			// A missing model is no reason to retry the same request, but the next model may exist.
			expect(transient, `status ${status} (${kind})`).toBe(
				isTransientStatus(status) || status === 404,
			);
		}
	});
});
