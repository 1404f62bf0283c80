#!/usr/bin/env bash
# With CI=true a test whose component is missing fails, naming its Debian package (issue #30): the PACS
# suite is run with Orthanc taken off PATH (/usr/sbin left out) and must fail with "Debian package
# orthanc"; without CI=true the same run skips and says why.
#   missing-component-fails-in-ci.sh TEST_PROGRAM
set -u
program="$1"
filter="PacsCli.FindListsTheStudyAndItsFourSeries"
narrow="/usr/local/bin:/usr/bin:/bin"
if PATH="$narrow" command -v Orthanc >/dev/null; then
  echo "Orthanc is still on $narrow: this check cannot take it away" >&2
  exit 1
fi
ci_output=$(PATH="$narrow" CI=true "$program" --gtest_filter="$filter" 2>&1)
ci_status=$?
local_output=$(env -u CI PATH="$narrow" "$program" --gtest_filter="$filter" 2>&1)
local_status=$?
echo "$ci_output" | tail -n 5
if [ "$ci_status" -eq 0 ]; then
  echo "FAILED: with CI=true and no Orthanc on PATH the suite passed" >&2
  exit 1
fi
if ! grep -q "CI=true, and this test cannot run: Orthanc is not on PATH (Debian package orthanc)" <<<"$ci_output"; then
  echo "FAILED: the CI failure does not name the package" >&2
  exit 1
fi
if [ "$local_status" -ne 0 ] || ! grep -q "Skipped" <<<"$local_output" || ! grep -q "Debian package orthanc" <<<"$local_output"; then
  echo "FAILED: outside CI the test should skip saying why; it printed:" >&2
  echo "$local_output" >&2
  exit 1
fi
echo "with CI=true: failed naming the package; without: skipped saying why"
