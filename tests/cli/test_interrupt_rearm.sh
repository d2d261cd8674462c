#!/bin/bash
# cli/main.c: Ctrl-C after a caught "interrupted!" raises again (the handler
# is re-armed), and only an integer gpubench_exit is an exit request.
# Usage: bash test_interrupt_rearm.sh <path-to-gpubench>
GB=${1:?usage: test_interrupt_rearm.sh <gpubench>}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() { # name, condition result (0 = ok)
    if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
wait_text() { # file, text, seconds
    local i=0
    while ! grep -q "$2" "$1" 2>/dev/null && [ $i -lt $(($3 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
    grep -q "$2" "$1" 2>/dev/null
}

# A script that catches the interrupt twice. Before the fix the second Ctrl-C
# found SIG_DFL still installed and killed the process (status 130), so the
# Lua state was never closed and no __gc released device objects.
"$GB" -e 'for i = 1, 2 do
  local ok, e = pcall(function() print("looping " .. i); io.stdout:flush(); while true do end end)
  print("caught " .. i .. " " .. tostring(e)); io.stdout:flush()
end
print("done")' >"$T/out" 2>"$T/err" &
pid=$!
if wait_text "$T/out" "looping 1" 20; then
    kill -INT "$pid"
    wait_text "$T/out" "looping 2" 20 && kill -INT "$pid"
fi
i=0
while kill -0 "$pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
wait "$pid"
rc=$?
check "second caught Ctrl-C: exit 0 (got $rc)" "$([ "$rc" = 0 ]; echo $?)"
check "second caught Ctrl-C: both interrupts caught, script finished" \
    "$([ "$(cat "$T/out")" = $'looping 1\ncaught 1 interrupted!\nlooping 2\ncaught 2 interrupted!\ndone' ]; echo $?)"

# gpubench_exit = 3.0 is a float: an ordinary error (status 1, traceback), as
# docs/CLI.md and gpubench.errors.is_exit say; 3 is an exit request.
"$GB" -e 'error(setmetatable({gpubench_exit = 3.0, message = "m"}, {__tostring = function(e) return e.message end}))' \
    >"$T/out" 2>"$T/err"
rc=$?
check "float gpubench_exit: status 1 (got $rc)" "$([ "$rc" = 1 ]; echo $?)"
"$GB" -e 'error({gpubench_exit = 3, message = "m"})' >"$T/out" 2>"$T/err"
rc=$?
check "integer gpubench_exit: status 3 (got $rc)" "$([ "$rc" = 3 ]; echo $?)"
check "integer gpubench_exit: one-line message" "$([ "$(cat "$T/err")" = "gpubench: m" ]; echo $?)"

[ "$fails" = 0 ]
