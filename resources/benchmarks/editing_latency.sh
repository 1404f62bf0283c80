#!/usr/bin/env bash
# Editing latency in the studio (issue #29), asserted: runs the Qt Test of the editing tools (real mouse
# and key events on a 240x240x155 image, tests/app/studio/EditingTest.cpp) and checks what it measured:
#   a stroke redraws the slice view within 50 ms,
#   the 3-D surfaces of the labels an edit touched are rebuilt within 1 s (off the GUI thread),
#   the GUI thread is never busy over 100 ms with one action or between two ticks while it waits.
#   bash resources/benchmarks/editing_latency.sh [BUILD_DIR] [--save | --smoke]
# --save writes resources/benchmarks/results/<date>-<cpu>-editing-latency.json. Exit 1 when a bound fails.
# --smoke runs only the two measuring test functions and checks that the figures come out, not their
# bounds (the smoke suite runs it beside other tests, where a bound would measure the neighbours).
set -euo pipefail
build="${1:-build/release}"
save=0 smoke=0
case "${2:-}" in
  --save) save=1 ;;
  --smoke) smoke=1 ;;
  "") ;;
  *) echo "editing_latency: unknown option '$2' (--save or --smoke)" >&2; exit 2 ;;
esac
test_program="$(realpath -m "$build")/bin/test_app_studio_editing"
[ -x "$test_program" ] || { echo "editing_latency: $test_program is not built (cmake --build --preset release)" >&2; exit 2; }
run=(env QT_QPA_PLATFORM=xcb "$test_program")
[ "$smoke" -eq 0 ] || run+=(paintWithTheShortcutChangesExactlyTheBrushsVoxels surfacesOfTheTouchedLabelsUpdate)
[ -n "${DISPLAY:-}" ] || run=(xvfb-run -a "${run[@]}")
output=$(cd "$build" && "${run[@]}" 2>&1) || { echo "$output" >&2; echo "editing_latency: the editing test failed" >&2; exit 1; }
value() { grep -o "EDITING-BENCH $1=[0-9.]*" <<<"$output" | tail -n 1 | cut -d= -f2; }
stroke=$(value stroke_redraw_ms); surfaces=$(value surface_update_ms); stall=$(value max_event_loop_stall_ms)
action=$(value longest_action_ms)
[ -n "$stroke" ] && [ -n "$surfaces" ] && [ -n "$stall" ] || { echo "$output" >&2; echo "editing_latency: no figures printed" >&2; exit 1; }
echo "stroke redraw ${stroke} ms (bound 50), 3-D update of an edit ${surfaces} ms (bound 1000), longest GUI-thread stall ${stall} ms (bound 100; longest single action ${action} ms)"
[ "$smoke" -eq 0 ] || { echo "editing_latency: --smoke, bounds not checked"; exit 0; }
status=0
awk -v v="$stroke" 'BEGIN { exit !(v <= 50) }' || { echo "FAILED: a stroke took ${stroke} ms to redraw" >&2; status=1; }
awk -v v="$surfaces" 'BEGIN { exit !(v <= 1000) }' || { echo "FAILED: the 3-D update took ${surfaces} ms" >&2; status=1; }
awk -v v="$stall" 'BEGIN { exit !(v <= 100) }' || { echo "FAILED: the GUI thread was blocked ${stall} ms" >&2; status=1; }
if [ "$save" -eq 1 ]; then
  cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/[^A-Za-z0-9]\+/-/g; s/^-//; s/-$//')
  out="$(dirname "$0")/results/$(date +%F)-${cpu}-editing-latency.json"
  printf '{"command": "bash resources/benchmarks/editing_latency.sh %s --save", "cpu": "%s", "image": "240x240x155",\n "stroke_redraw_ms": %s, "surface_update_ms": %s, "max_event_loop_stall_ms": %s, "longest_action_ms": %s,\n "bounds_ms": {"stroke_redraw": 50, "surface_update": 1000, "event_loop_stall": 100}, "passed": %s}\n' \
    "$build" "$cpu" "$stroke" "$surfaces" "$stall" "$action" "$([ $status -eq 0 ] && echo true || echo false)" > "$out.tmp"
  mv "$out.tmp" "$out"
  echo "written: $out"
fi
exit $status
