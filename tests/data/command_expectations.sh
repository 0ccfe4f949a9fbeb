# Sourced by the data command tests: `fail MESSAGE` ends the test, and
# `expect_refusal TEXT COMMAND...` runs a command that must exit with code 2
# and say TEXT. Both write to the caller's $work folder.
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_refusal() {  # expect_refusal TEXT COMMAND...
  local text=$1
  shift
  set +e
  "$@" >"$work/out" 2>&1
  local code=$?
  set -e
  [[ $code -eq 2 ]] || fail "exit code $code for $*: $(cat "$work/out")"
  grep -qF -- "$text" "$work/out" || fail "no '$text' for $*: $(cat "$work/out")"
}
