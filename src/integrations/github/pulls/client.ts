import type { PullRequestFollowUps } from "./follow-up";

// PLACEHOLDER while the client is written on this branch: replaced before the branch lands.
export function gitHubFollowUps(_token: string, _apiUrl?: string): PullRequestFollowUps {
	throw new Error("not implemented yet");
}
