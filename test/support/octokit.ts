import { RequestError } from "octokit";

/** The status GitHub (or its double) answered a request made through octokit: 200 when it succeeded. */
export async function statusOf(request: Promise<unknown>): Promise<number> {
	try {
		await request;
		return 200;
	} catch (e) {
		if (e instanceof RequestError) return e.status;
		throw e;
	}
}
