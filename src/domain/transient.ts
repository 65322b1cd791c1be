// Which agent failures are worth trying the next model for (the original Lisa CLI's list, exactly, plus
// Lisa's own supervision marker). Anything else stops the fallback chain.

export const TRANSIENT_PATTERNS: readonly RegExp[] = [
	/429/i,
	/quota/i,
	/rate.?limit/i,
	/too many requests/i,
	/resource.?exhausted/i,
	/overloaded/i,
	/unavailable/i,
	/not.?found.*model/i,
	/model.*not.?found/i,
	/does not exist/i,
	/ETIMEDOUT/,
	/ECONNREFUSED/,
	/ECONNRESET/,
	/ENOTFOUND/,
	/timeout/i,
	/timed?\s*out/i,
	/network.?error/i,
	/not installed/i,
	/not in PATH/i,
	/command not found/i,
	/lisa-overseer/i,
	/lisa-supervisor/i,
];

export function isTransientFailure(output: string): boolean {
	return TRANSIENT_PATTERNS.some((re) => re.test(output));
}

/** An HTTP answer worth trying elsewhere: rate limited, timed out or a server error. */
export function isTransientStatus(status: number): boolean {
	return status === 408 || status === 429 || status >= 500;
}
