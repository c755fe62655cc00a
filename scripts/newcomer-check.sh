#!/usr/bin/env bash
# A newcomer's first hour, from this clone with a fresh HOME (issue 33; run by .ci/run after `npm ci`):
# the help, `init`, `init --global`, `doctor`, `init --mcp` from outside the checkout (ocpool not on
# PATH), and the uninstall, each checked for what a new user sees. Fails, naming the step, if one goes
# wrong or if anything under the real HOME changed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
real_home=${HOME}
fresh=$(mktemp -d /tmp/ocpool-newcomer-XXXXXX)
outside=$(mktemp -d /tmp/ocpool-outside-XXXXXX)
trap 'rm -rf "$fresh" "$outside"' EXIT

before=$(npx --no-install tsx -e 'import { snapshot } from "./test/support/homeGuard.ts"; console.log(JSON.stringify([...snapshot(process.argv[1])]))' "$real_home")

fail() {
  echo "newcomer check failed: $*" >&2
  exit 1
}

# the newcomer's environment: a HOME of their own, no XDG overrides, ocpool not on PATH
export HOME=$fresh
export npm_config_update_notifier=false
unset XDG_CONFIG_HOME XDG_STATE_HOME XDG_DATA_HOME XDG_CACHE_HOME OCPOOL_STATE_DIR OCPOOL_STATE_URL
if command -v ocpool >/dev/null 2>&1; then
  PATH=$(echo "$PATH" | tr ':' '\n' | grep -vx "$(dirname "$(command -v ocpool)")" | paste -sd: -)
  export PATH
fi

echo "-- ocpool --help: the commands grouped, within 80 columns"
help=$(COLUMNS=80 npx --no-install ocpool --help)
[ "$(echo "$help" | wc -l)" -le 45 ] || fail "ocpool --help has $(echo "$help" | wc -l) lines"
[ "$(echo "$help" | awk '{ print length }' | sort -n | tail -1)" -le 80 ] || fail "ocpool --help has a line over 80 columns"
echo "$help" | grep -q '^heavy work$' || fail "ocpool --help lacks its groups"

echo "-- a usage error is short and names the fix"
set +e
err=$(npx --no-install ocpool sttus 2>&1 >/dev/null)
code=$?
set -e
[ "$code" = 2 ] || fail "ocpool sttus exited $code"
[ "$(echo "$err" | head -1)" = "ocpool: unknown command 'sttus' (did you mean 'status'?)" ] || fail "ocpool sttus said: $err"
[ "$(echo "$err" | wc -l)" -le 4 ] || fail "ocpool sttus printed $(echo "$err" | wc -l) lines"

echo "-- init: the pool file, and a hint that runs from here"
out=$(npx --no-install ocpool init)
[ -f "$HOME/.config/opencode-pool/pool.txt" ] || fail "init wrote no pool file"
echo "$out" | grep -q "with: npx ocpool init --global" || fail "init's hint is not 'npx ocpool init --global' inside the checkout: $out"

echo "-- init --global: the plugin entry of this checkout"
npx --no-install ocpool init --global >/dev/null
grep -q "file://$root/" "$HOME/.config/opencode/opencode.json" || fail "init --global did not list this checkout"
npx --no-install ocpool doctor >/dev/null 2>&1 || true
npx --no-install ocpool doctor --json | node -e '
  const r = JSON.parse(require("fs").readFileSync(0, "utf8"))
  const plugin = r.checks.find((c) => c.id === "plugin")
  if (plugin === undefined || plugin.status !== "ok") { console.error("doctor plugin check: " + JSON.stringify(plugin)); process.exit(1) }
' || fail "doctor does not see the plugin listed"

echo "-- init --mcp claude-code from outside the checkout: an absolute command that starts"
(cd "$outside" && node "$root/bin/ocpool.js" init --mcp claude-code) >"$outside/mcp.out" 2>&1 || fail "init --mcp claude-code: $(cat "$outside/mcp.out")"
node -e '
  const { execFileSync } = require("child_process")
  const entry = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).mcpServers.ocpool
  if (entry.command === "ocpool") { console.error("wrote the bare command ocpool, which is not on PATH"); process.exit(1) }
  const args = (entry.args ?? []).filter((a) => a !== "mcp")
  execFileSync(entry.command, [...args, "--version"], { stdio: "pipe" })
' "$HOME/.claude.json" || fail "init --mcp wrote a command that does not start"

echo "-- uninstall"
npx --no-install ocpool init --global --remove >/dev/null
grep -q "opencode-pool" "$HOME/.config/opencode/opencode.json" && fail "init --global --remove left the entry"
(cd "$outside" && node "$root/bin/ocpool.js" init --mcp claude-code --remove >/dev/null)

export HOME=$real_home
after=$(npx --no-install tsx -e 'import { snapshot } from "./test/support/homeGuard.ts"; console.log(JSON.stringify([...snapshot(process.argv[1])]))' "$real_home")
[ "$before" = "$after" ] || fail "the real HOME ($real_home) changed"
echo "newcomer check: ok"
