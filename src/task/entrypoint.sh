#!/bin/sh
# The agent container's entrypoint. The secrets (GITHUB_TOKEN, the agents' keys, AWS credentials:
# every variable named *KEY, *TOKEN, *SECRET, *PASSWORD or AWS_CONTAINER_CREDENTIALS_*_URI) reach the
# task on file descriptor 3, as one JSON object, instead of its environment: a process's initial
# environment stays readable in /proc/<pid>/environ, and exec makes the task PID 1. The task reads
# the descriptor and closes it before any agent runs. What keeps the agent out of the task's
# environment and memory is that it runs as another user (LISA_AGENT_UID); this is a second layer.
# LISA_SECRETS_FILE names a JSON object of more of them (the container launcher mounts one, readable
# by root only: podman shows the values of secrets given as variables in `podman inspect`).
# Arguments go to the task (`egress-proxy`: the image as the egress proxy service).
set -eu
main="$(dirname "$0")/agent.mjs"
handoff=$(node -e '
const names = Object.keys(process.env).filter(
	(k) =>
		/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) &&
		/(KEY|TOKEN|SECRET|PASSWORD|^AWS_CONTAINER_CREDENTIALS_(RELATIVE|FULL)_URI)$/.test(k),
);
const file = process.env.LISA_SECRETS_FILE;
const given = file ? JSON.parse(require("node:fs").readFileSync(file, "utf8")) : {};
const secrets = { ...given, ...Object.fromEntries(names.map((k) => [k, process.env[k]])) };
console.log(names.join(" "));
console.log(JSON.stringify(secrets));
')
{
	read -r names
	read -r secrets
} <<HANDOFF
$handoff
HANDOFF
unset LISA_SECRETS_FILE
if [ "$secrets" = "{}" ]; then
	exec node "$main" "$@"
fi
for name in $names; do
	unset "$name"
done
export LISA_SECRETS_FD=3
exec node "$main" "$@" 3<<SECRETS
$secrets
SECRETS
