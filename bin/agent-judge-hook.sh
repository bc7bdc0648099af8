#!/bin/sh
# The command hook's fast path: `sh agent-judge-hook.sh [--node NODE] claude-code|codex|gemini [--url URL]
# [--token-file FILE] [--timeout-ms MS] [--defer-when-held]`. The same contract as bin/agent-judge-hook.mjs (src/hooks/client.ts), with
# curl in place of a Node process start (~60 ms on a small machine, most of a command hook's cost): stdin goes to the
# resident gate, its answer comes back (stdout, exit 0), a refusal is exit 2 with the reason on stderr.
#
# Only the answered path runs here. Everything else goes to the Node client with the same arguments and the same
# input, which then answers exactly as it always did (blocking a pre-tool call with exit 2, warning for a post-tool
# report with exit 1): no curl; an address other than http://host[:port]; a token file that is missing, unreadable or
# holds anything but one token; no answer from the gate (refused, unreachable, a broken reply). A gate that does not
# answer within the timeout is not asked twice: that blocks here, as the Node client would.
set -u
here=$(dirname -- "$0")
# `--node PATH` first (as `agent-judge hook install` writes it): the Node that runs the Node client, not the PATH's.
node=node
if [ "${1:-}" = --node ] && [ $# -ge 2 ]; then
  node=$2
  shift 2
fi
input=
node_client() {
  if [ -n "$input" ]; then
    # The input was read already: hand it on from the file it was saved to (removed once the client has it).
    exec 3<"$input"
    rm -f "$input"
    exec "$node" "$here/agent-judge-hook.mjs" "$@" <&3 3<&-
  fi
  exec "$node" "$here/agent-judge-hook.mjs" "$@"
}
command -v curl >/dev/null 2>&1 || node_client "$@"

case ${1:-} in
claude-code | codex | gemini) runtime=$1 ;;
*) node_client "$@" ;;
esac
url=http://127.0.0.1:8766
token_file=.agent-judge/hook-token
timeout_ms=55000
defer=
# The options as the Node client reads them; anything it would refuse (or word) is left to it, "$@" untouched.
option=
for arg in "$@"; do
  case $option in
  '') ;;
  --url) url=$arg option= && continue ;;
  --token-file) token_file=$arg option= && continue ;;
  --timeout-ms)
    case $arg in '' | *[!0-9]*) node_client "$@" ;; esac
    timeout_ms=$arg option=
    continue
    ;;
  esac
  case $arg in
  "$runtime") [ -z "${seen:-}" ] || node_client "$@"; seen=1 ;;
  --defer-when-held) defer='?defer=1' ;;
  --url | --token-file | --timeout-ms) option=$arg ;;
  *) node_client "$@" ;;
  esac
done
[ -z "$option" ] || node_client "$@"
# The Node client resolves `/hooks/<runtime>` against the URL: only its origin counts.
case $url in
http://*) host=${url#http://} host=${host%%[/?#]*} ;;
*) node_client "$@" ;;
esac
case $host in '' | *[!A-Za-z0-9.:-]*) node_client "$@" ;; esac
[ -f "$token_file" ] && [ -r "$token_file" ] || node_client "$@"

umask 077
input=$(mktemp "${TMPDIR:-/tmp}/agent-judge-hook.XXXXXX") || node_client "$@"
trap 'rm -f "$input"' EXIT
cat >"$input" || node_client "$@"

fail() {
  if head -c 4096 "$input" | grep -Eq '"hook_event_name"[[:space:]]*:[[:space:]]*"(PostToolUse|PostToolUseFailure|AfterTool)"'; then
    printf 'agent-judge: the outcome was not recorded: %s\n' "$1" >&2
    exit 1
  fi
  printf 'agent-judge: %s; the call was not allowed\n' "$1" >&2
  exit 2
}
[ "$(wc -c <"$input")" -le 4194304 ] || fail 'the hook input is larger than 4194304 bytes'

# One line holding one token of the form agent-judge writes (it goes into curl's config, quoted: nothing to escape);
# any other file the Node client reads (and trims) itself.
token= extra=
{ IFS= read -r token; IFS= read -r extra && extra=line; } <"$token_file" 2>/dev/null
[ -z "$extra" ] || node_client "$@"
case $token in '' | *[!A-Za-z0-9._~+/=-]*) node_client "$@" ;; esac

nl='
'
cr=$(printf '\r')
# The token reaches curl through its config on stdin, never on a command line others can read. `Expect:` off: one
# header block per answer. -D - puts the headers before the body on stdout; -w appends the status after it.
answer=$(printf 'header = "authorization: Bearer %s"\n' "$token" | curl -sS -K - -X POST -D - \
  --max-time "$((timeout_ms / 1000)).$(printf '%03d' $((timeout_ms % 1000)))" \
  -H 'content-type: application/json' -H 'Expect:' --data-binary "@$input" \
  -w "${nl}%{http_code}" "http://$host/hooks/$runtime$defer" 2>/dev/null)
sent=$?
# No answer in time: blocked here (asking again would double the wait). No answer at all: the Node client says why.
[ "$sent" -ne 28 ] || fail "the agent-judge gate at $url cannot be reached (no answer within $timeout_ms ms); \
start it with \`agent-judge dev\` or \`agent-judge gate\`"
[ "$sent" -eq 0 ] || node_client "$@"
status=${answer##*"$nl"}
answer=${answer%"$nl"*}
head=${answer%%"$cr$nl$cr$nl"*}
body=${answer#*"$cr$nl$cr$nl"}
exit_code=
case "$head$cr$nl" in
*"$nl"[Xx]-[Aa][Gg][Ee][Nn][Tt]-[Jj][Uu][Dd][Gg][Ee]-[Ee][Xx][Ii][Tt]-[Cc][Oo][Dd][Ee]:*)
  exit_code=${head#*"$nl"[Xx]-[Aa][Gg][Ee][Nn][Tt]-[Jj][Uu][Dd][Gg][Ee]-[Ee][Xx][Ii][Tt]-[Cc][Oo][Dd][Ee]:}
  exit_code=${exit_code%%"$cr"*}
  exit_code=${exit_code# }
  ;;
esac
# The body without surrounding white space (JavaScript's trim of an ASCII answer).
trimmed=$body
while :; do case $trimmed in [[:space:]]*) trimmed=${trimmed#?} ;; *) break ;; esac; done
while :; do case $trimmed in *[[:space:]]) trimmed=${trimmed%?} ;; *) break ;; esac; done
if [ "$status" = 200 ] && [ "$exit_code" = 0 ]; then
  # Nothing to say is an empty object: print nothing (Codex reads any JSON it does not know as a failed hook).
  [ "$trimmed" = '{}' ] || printf '%s' "$body"
  exit 0
fi
if [ "$status" = 422 ] && [ "$exit_code" = 2 ]; then
  printf '%s\n' "$trimmed" >&2
  exit 2
fi
fail "the gate answered HTTP $status: $(printf '%.500s' "$trimmed")"
