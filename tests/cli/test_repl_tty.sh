#!/usr/bin/env bash
# The REPL under a real terminal: gpubench runs inside tmux (a private server,
# a fixed 100x50 window), keys go in with send-keys and the screen comes back
# with capture-pane, polled until the expected text shows or a timeout.
# Checks, with readline and then libedit (each when it loads): the banner, a
# table printed through inspect, tab completion of a global and of dev:fl
# (without opening the device), help(dev), Ctrl-C at the prompt and in a
# running loop, exit on Ctrl-D, and the history file (HOME is a temp dir).
#
#   bash tests/cli/test_repl_tty.sh path/to/gpubench      (from the repo root)
#
# Exit status: 0 passed, 1 failed, 77 skipped (no tmux, or no line-editing
# library); under CI=true a missing tmux or readline fails instead.
set -u

GB=$(cd "$(dirname "${1:?usage: test_repl_tty.sh path/to/gpubench}")" && pwd)/$(basename "$1")
TIMEOUT=${TTY_TIMEOUT:-60}

missing() { # what is missing: skip, or fail under CI
    if [ "${CI:-}" = true ]; then
        echo "FAIL test_repl_tty: $1 (CI=true; scripts/install-deps.sh installs it)"
        exit 1
    fi
    echo "skip test_repl_tty: $1"
    exit 77
}
command -v tmux >/dev/null 2>&1 || missing "tmux is missing"

unset TMUX # a test run inside tmux still starts its own server
T=$(mktemp -d)
SOCK=$T/tmux.sock
# exit-empty off: the server outlives the first library's session (killed at
# exit), so the next new-session cannot meet a server that is shutting down
# ("server exited unexpectedly", seen once in CI).
printf 'set -s exit-empty off\nset -g remain-on-exit on\nset -g history-limit 5000\n' >"$T/tmux.conf"
tm() { tmux -S "$SOCK" -f "$T/tmux.conf" "$@"; }
trap 'tmux -S "$SOCK" kill-server 2>/dev/null; rm -rf "$T"' EXIT

passed=0
failed=0
libs_run=0

screen() { tm capture-pane -p -J -t repl -S -5000 2>/dev/null | sed 's/[[:space:]]*$//'; }
last_line() { screen | sed '/^$/d' | tail -n 1; }

# until CMD...: polls CMD every 0.1 s for up to $TIMEOUT seconds.
until_ok() {
    local i=0
    while ! "$@"; do
        [ $i -ge $((TIMEOUT * 10)) ] && return 1
        sleep 0.1
        i=$((i + 1))
    done
}
shows() { screen | grep -qF -- "$1"; }           # the text anywhere on screen
shows_line() { screen | grep -qxF -- "$1"; }     # a whole line
prompt_is() { [ "$(last_line)" = "$1" ]; }       # the cursor line, trailing blanks trimmed
pane_dead() { [ "$(tm display-message -p -t repl '#{pane_dead}')" = 1 ]; }
pane_status() { tm display-message -p -t repl '#{pane_dead_status}'; }

check() { # description, command...
    local what=$1
    shift
    if until_ok "$@"; then
        passed=$((passed + 1))
        echo "ok   [$lib] $what"
    else
        failed=$((failed + 1))
        echo "FAIL [$lib] $what; the screen:"
        screen | sed '/^ *$/d' | tail -n 25 | sed 's/^/    | /'
    fi
}

keys() { tm send-keys -t repl "$@"; }
line() { keys -l "$1"; keys Enter; }

# A device lets help(dev) and the live counts run; without one they are left out.
has_device=0
"$GB" -e 'require("gpu").open{}' >/dev/null 2>&1 && has_device=1

session() { # one library
    lib=$1
    mkdir -p "$T/home-$lib"
    tm new-session -d -s repl -x 100 -y 50 env HOME="$T/home-$lib" GPUBENCH_READLINE="$lib" "$GB"
    if ! until_ok prompt_is ">"; then
        failed=$((failed + 1))
        echo "FAIL [$lib] no prompt; the screen:"
        screen | sed 's/^/    | /'
        tm kill-session -t repl
        return
    fi
    if shows "no line editing"; then
        echo "skip [$lib]: $(screen | grep -F 'no line editing')"
        tm kill-session -t repl
        return
    fi
    libs_run=$((libs_run + 1))
    check "banner: versions and devices" eval \
        "screen | grep -qE '^gpubench [0-9.]+ \(git [^)]+\), Lua 5\.4\.[0-9]+ \| (devices: |no devices)'"

    line '{1, 2, x = "y"}'
    check "a table prints through inspect" eval 'shows_line "{ 1, 2," && shows_line "  x = \"y\"" && prompt_is ">"'

    keys -l 'coll'
    keys Tab
    check "Tab completes a global: coll -> collectgarbage" prompt_is "> collectgarbage"
    line '("count") > 0'
    check "... and the completed line runs" eval 'shows_line "true" && prompt_is ">"'

    keys -l 'dev:fl'
    keys Tab
    check "Tab completes a method: dev:fl -> dev:flush_l2" prompt_is "> dev:flush_l2"
    keys C-c
    check "Ctrl-C drops the line and gives a fresh prompt" eval \
        'shows_line "> dev:flush_l2^C" && prompt_is ">"'
    if [ $has_device = 1 ]; then
        line '"live=" .. gpu.live().devices'
        check "completing dev: did not open the device" shows_line "live=0"
        line 'help(dev)'
        check "help(dev) lists flush_l2 with its description" eval \
            "screen | grep -qE '^  dev:flush_l2\(.*\) +evicts the L2' && prompt_is '>'"
        line '"live=" .. gpu.live().devices'
        check "dev opened on first use" shows_line "live=1"
    fi

    line 'for i = 1, 2 do'
    check "an unfinished statement continues" prompt_is ">>"
    keys C-c
    check "Ctrl-C drops the unfinished statement" prompt_is ">"
    line '"after="..(1+1)'
    check "the session goes on" shows_line "after=2"

    line 'print("looping") while true do end'
    check "a loop runs" shows_line "looping"
    keys C-c
    check "Ctrl-C stops a running loop" eval 'shows "interrupted!" && prompt_is ">"'

    keys C-d
    check "Ctrl-D ends the session" pane_dead
    # The status when tmux reports it: on some kernels the exited child is
    # never reaped, so a missing status is not a failure.
    if TIMEOUT=5 until_ok eval '[ -n "$(pane_status)" ]'; then
        check "... with status 0" eval '[ "$(pane_status)" = 0 ]'
    else
        echo "note [$lib] tmux reported no exit status"
    fi
    # (a line without blanks: libedit's file escapes them as \040)
    check "history written to \$HOME/.gpubench_history" grep -qxF '"after="..(1+1)' \
        "$T/home-$lib/.gpubench_history"
    tm kill-session -t repl
}

session libreadline.so.8
session libedit.so.2

echo "$passed passed, $failed failed"
[ $failed -gt 0 ] && exit 1
[ $libs_run -eq 0 ] && missing "neither libreadline.so.8 nor libedit.so.2 loads"
[ $has_device = 0 ] && echo "(no device: help(dev) and the live counts were not checked)"
exit 0
