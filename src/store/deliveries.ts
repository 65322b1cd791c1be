/** Webhook dedupe: a delivery is keyed by the hash of what its signature covers. */
export interface DeliveryStore {
	/**
	 * Records a delivery as accepted, to be sent with `runId`; false when it was recorded before and
	 * its record has not expired.
	 */
	claimDelivery(
		source: string,
		dedupeKey: string,
		runId: string,
		opts: { nowMs: number; ttlSeconds: number },
	): Promise<boolean>;
	/** A delivery's unexpired record: the run id it was sent with, and when. */
	deliveryClaim(
		source: string,
		dedupeKey: string,
		nowMs: number,
	): Promise<{ runId: string; claimedAt: number } | undefined>;
	/** Gives a claim back (enqueueing failed) so the provider's retry is accepted. */
	releaseDelivery(source: string, dedupeKey: string, runId: string): Promise<void>;
}
