#!/usr/bin/env bash
# The step of the nrtabi GitHub Action (action.yml) and of the GitLab job of
# docs/ci.md: run `nrtabi check` or `nrtabi diff` on the inputs the job
# names and leave the reports a CI shows: SARIF for code scanning, JUnit
# (check) or JSON (diff) for a test view or an artefact, and the text in
# the log. The exit status is the SARIF run's (--fail-on decides it); the
# reports are written whatever it is, so the upload steps after it run.
#
# Environment (every one optional but NRTABI_ARGS):
#   NRTABI_COMMAND      check (default) or diff
#   NRTABI_ARGS         the command's arguments, split on blanks: FILE...,
#                       --headers DIR, or OLD NEW for diff
#   NRTABI_SPEC         check --spec (a release name or a spec directory)
#   NRTABI_WAIVERS      --waivers FILE (default: nrtabi-waivers.toml when present)
#   NRTABI_FAIL_ON      --fail-on (default incompatible)
#   NRTABI_SOURCE_ROOT  --source-root (default: the working directory)
#   NRTABI_REPORTS      the reports' directory (default reports)
#   GITHUB_OUTPUT       where the step's outputs go (set by GitHub)
set -euo pipefail
cmd=${NRTABI_COMMAND:-check}
case "$cmd" in
check | diff) ;;
*)
	echo "nrtabi action: command \"$cmd\": use check or diff" >&2
	exit 2
	;;
esac
if [ -z "${NRTABI_ARGS:-}" ]; then
	echo "nrtabi action: args is empty: name the files, --headers DIR, or OLD NEW for diff" >&2
	exit 2
fi
read -r -a args <<<"$NRTABI_ARGS"
reports=${NRTABI_REPORTS:-reports}
mkdir -p "$reports"
common=(--fail-on "${NRTABI_FAIL_ON:-incompatible}")
if [ -n "${NRTABI_SPEC:-}" ]; then
	[ "$cmd" = check ] || { echo "nrtabi action: spec is for check; diff takes OLD NEW in args" >&2; exit 2; }
	common+=(--spec "$NRTABI_SPEC")
fi
[ -z "${NRTABI_WAIVERS:-}" ] || common+=(--waivers "$NRTABI_WAIVERS")
sarif="$reports/nrtabi-$cmd.sarif"
status=0
nrtabi "$cmd" "${common[@]}" --format sarif --source-root "${NRTABI_SOURCE_ROOT:-$PWD}" "${args[@]}" >"$sarif" || status=$?
# The other reports keep the run's status above; a run that could not read
# its input leaves an error document in each.
if [ "$cmd" = check ]; then
	nrtabi check "${common[@]}" --format junit "${args[@]}" >"$reports/nrtabi-check.xml" || true
else
	nrtabi diff "${common[@]}" --format json "${args[@]}" >"$reports/nrtabi-diff.json" || true
fi
# For people, in the job's log.
nrtabi "$cmd" "${common[@]}" "${args[@]}" || true
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	{
		echo "sarif=$sarif"
		echo "exit=$status"
	} >>"$GITHUB_OUTPUT"
fi
echo "nrtabi $cmd exited $status; reports in $reports/" >&2
exit "$status"
