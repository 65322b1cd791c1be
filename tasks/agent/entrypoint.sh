#!/bin/sh
# The agent container's entrypoint. GITHUB_TOKEN reaches the task on file descriptor 3 instead of
# its environment: a process's initial environment stays readable in /proc/<pid>/environ by every
# process of the same user, the agent CLI included. exec replaces this shell, so no process keeps
# the token in its environment; the task reads the descriptor and closes it before any agent runs.
set -eu
main="$(dirname "$0")/agent.mjs"
if [ -n "${GITHUB_TOKEN:-}" ]; then
	token=$GITHUB_TOKEN
	unset GITHUB_TOKEN
	export LISA_GITHUB_TOKEN_FD=3
	exec node "$main" 3<<EOF
$token
EOF
fi
exec node "$main"
