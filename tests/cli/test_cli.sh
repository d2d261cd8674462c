#!/usr/bin/env bash
# Shell-level tests of the gpubench command line: exit statuses, messages, the
# arg table, stdin scripts, the REPL through a pipe and Ctrl-C through a fifo.
#
#   bash tests/cli/test_cli.sh path/to/gpubench      (from the repo root)
#
# Exit status: 0 none failed, 1 any failed. Prints "N passed, N failed, N skipped"
# (a test skips only when its prerequisite is missing, e.g. no Vulkan device).
set -u

if [ $# -ne 1 ]; then
    echo "usage: bash tests/cli/test_cli.sh path/to/gpubench" >&2
    exit 1
fi
if [ ! -x "$1" ]; then
    echo "test_cli: '$1' is not an executable" >&2
    exit 1
fi
GB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROOT=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# A dead reader must fail a test, not kill this script.
trap '' PIPE

passed=0
failed=0
skipped=0
why=""
skip=""

# check DESCRIPTION CONDITION...: records a failure when the condition fails.
check() {
    local what=$1
    shift
    if ! "$@"; then why="$why; $what"; fi
}

# run ARGS...: runs gpubench with stdin from /dev/null; sets rc, out, err.
run() {
    "$GB" "$@" </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    out=$(cat "$T/out")
    err=$(cat "$T/err")
}

# run_in INPUT ARGS...: the same with INPUT on stdin.
run_in() {
    local input=$1
    shift
    printf '%s' "$input" | "$GB" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    out=$(cat "$T/out")
    err=$(cat "$T/err")
}

lines() { printf '%s' "$1" | grep -c '' ; }
eq() { [ "$1" = "$2" ] || { echo "    expected [$2]" >&2; echo "    got      [$1]" >&2; return 1; }; }
has() { printf '%s' "$1" | grep -q -- "$2"; }
hasE() { printf '%s' "$1" | grep -Eq -- "$2"; }

# Waits up to $2 seconds for process $1; kills it after that. Sets rc.
wait_for() {
    local pid=$1 limit=$2 i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt $((limit * 10)) ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        rc=124
        return
    fi
    wait "$pid"
    rc=$?
}

# Waits up to $3 seconds until file $1 contains the fixed string $2.
wait_text() {
    local i=0
    while ! grep -qF -- "$2" "$1" 2>/dev/null; do
        [ $i -ge $(($3 * 10)) ] && return 1
        sleep 0.1
        i=$((i + 1))
    done
}

t_version() {
    run --version
    local want
    want=$(sed -n 's/^project(gpubench VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
    check "exit 0" eq "$rc" 0
    check "one line" eq "$(lines "$out")" 1
    check "format 'gpubench X (git R), Lua 5.4.N'" \
        hasE "$out" '^gpubench [0-9]+\.[0-9]+\.[0-9]+ \(git [^)]+\), Lua 5\.4\.[0-9]+$'
    check "version from CMakeLists ($want)" has "$out" "^gpubench $want "
    check "no stderr" eq "$err" ""
}

t_help() {
    run --help
    check "exit 0" eq "$rc" 0
    check "usage line" has "$out" '^usage: gpubench \[options\] \[script \[args...\]\]$'
    local opt
    for opt in '-e CODE' ' -i ' '--backend NAME' '--device N' '--list-devices' '--version' ' -  '; do
        check "mentions '$opt'" has "$out" "$opt"
    done
    check "names the compiled-in backends" has "$out" '(cuda, vulkan)'
}

t_unknown_option() {
    run --bogus script.lua
    check "exit 2" eq "$rc" 2
    check "nothing on stdout" eq "$out" ""
    check "one exact line" eq "$err" "gpubench: unrecognized option '--bogus' (try 'gpubench --help')"
}

t_bad_device() {
    local v
    for v in x -1 1.5 '' ' 1'; do
        run --device "$v" -e 'print("ran")'
        check "--device '$v' exits 2" eq "$rc" 2
        check "--device '$v' runs nothing" eq "$out" ""
        check "--device '$v' one line" eq "$(lines "$err")" 1
        check "--device '$v' message" eq "$err" \
            "gpubench: --device needs a non-negative integer, got '$v' (try 'gpubench --help')"
    done
    run --device 99999999999 -e 'print("ran")'
    check "--device past INT_MAX exits 2" eq "$rc:$out" "2:"
    check "--device past INT_MAX names the range" eq "$err" \
        "gpubench: --device 99999999999 is out of range (0 to 2147483647) (try 'gpubench --help')"
    run --device
    check "--device without value exits 2" eq "$rc" 2
    check "--device without value message" eq "$err" \
        "gpubench: '--device' needs a value (try 'gpubench --help')"
    run --device 0 -e 'print("ran")'
    check "--device 0 accepted" eq "$rc:$out" "0:ran"
    run --device=3 -e 'print("ran")'
    check "--device=3 accepted" eq "$rc:$out" "0:ran"
}

t_bad_backend() {
    run --backend nope -e 'print("ran")'
    check "exit 2" eq "$rc" 2
    check "runs nothing" eq "$out" ""
    check "one line naming the backend and the known ones" eq "$err" \
        "gpubench: unknown backend 'nope' for --backend (known: cuda, vulkan) (try 'gpubench --help')"
    run --backend=vulkan -e 'print("ran")'
    check "--backend=vulkan accepted" eq "$rc:$out" "0:ran"
    run --backend cuda -e 'print("ran")'
    check "--backend cuda accepted" eq "$rc:$out" "0:ran"
}

t_e_option() {
    run -e 'print(1+1)'
    check "prints 2" eq "$out" "2"
    check "exit 0" eq "$rc" 0
    run -e 'x = 20' -e'print(x + 1)'
    check "-e chunks run in order, attached form too" eq "$out" "21"
    run -e
    check "-e without code exits 2" eq "$rc" 2
    check "-e without code message" eq "$err" "gpubench: '-e' needs an argument (try 'gpubench --help')"
    run -e 'x ='
    check "syntax error exits 1" eq "$rc" 1
    check "syntax error message" eq "$err" "gpubench: (command line):1: unexpected symbol near <eof>"
    run -e 'error("first")' -e 'print("second")'
    check "an -e error stops the run" eq "$rc:$out" "1:"
}

t_script_error() {
    cat >"$T/err.lua" <<'EOF'
local function inner() error("boom in inner") end
inner()
EOF
    run "$T/err.lua"
    check "exit 1" eq "$rc" 1
    check "first line is the message" eq "$(printf '%s\n' "$err" | head -n 1)" \
        "gpubench: $T/err.lua:1: boom in inner"
    check "stack traceback" has "$err" '^stack traceback:$'
    check "traceback names the function" has "$err" "in local 'inner'"
    run "$T/missing.lua"
    check "missing script exits 1" eq "$rc" 1
    check "missing script message" has "$err" "^gpubench: cannot open $T/missing.lua"
}

t_arg_table() {
    cat >"$T/args.lua" <<'EOF'
print(arg[0], arg[1], arg[2], #arg)
print(select('#', ...), ...)
print(arg[-1], arg[-2])
EOF
    run "$T/args.lua" a 'b c'
    check "exit 0" eq "$rc" 0
    check "arg[0], arg[1], arg[2], #arg" eq "$(sed -n 1p "$T/out")" "$T/args.lua	a	b c	2"
    check "script varargs" eq "$(sed -n 2p "$T/out")" "2	a	b c"
    check "arg[-1] is the interpreter" eq "$(sed -n 3p "$T/out")" "$GB	nil"
    run --device 0 -- "$T/args.lua" -i --bogus
    check "options after the script belong to it" eq "$(sed -n 1p "$T/out")" "$T/args.lua	-i	--bogus	2"
    check "negative indices hold the options" eq "$(sed -n 3p "$T/out")" "--	0"
}

t_exit_request() {
    cat >"$T/exitreq.lua" <<'EOF'
local function check_options()
  error(setmetatable({gpubench_exit = 3, message = "ITERS=100O is not a positive integer"},
                     {__tostring = function(e) return e.message end}))
end
print("before")
check_options()
print("after")
EOF
    run "$T/exitreq.lua"
    check "exit status from gpubench_exit" eq "$rc" 3
    check "only the message, no traceback" eq "$err" "gpubench: ITERS=100O is not a positive integer"
    check "stops the script" eq "$out" "before"
    run -e 'error(setmetatable({gpubench_exit = 4}, {__tostring = function() return "via tostring" end}))'
    check "no message field: tostring" eq "$rc:$err" "4:gpubench: via tostring"
    run -e 'error({gpubench_exit = 0, message = "done early"})' -e 'print("not reached")'
    check "status 0 still stops" eq "$rc:$out:$err" "0::gpubench: done early"
    run -e 'print("help text")' -e 'error(setmetatable({gpubench_exit = 0, message = ""}, {}))'
    check "an empty message prints nothing" eq "$rc:$out:$err" "0:help text:"
    run -e 'error({gpubench_exit = "2", message = "not an exit request"})'
    check "a non-integer field is an ordinary error" eq "$rc" 1
    check "an ordinary error object gets a traceback" has "$err" '^stack traceback:$'
    run -e 'os.exit(7)'
    check "os.exit(7)" eq "$rc" 7
}

t_stdin_script() {
    run_in 'print("from stdin", arg[0], ...)' - x y
    check "'-' runs stdin with args" eq "$rc:$out" "0:from stdin	-	x	y"
    run_in 'print("piped")'
    check "no script and piped stdin runs it" eq "$rc:$out" "0:piped"
    run_in 'error("stdin boom")' -
    check "stdin script error exits 1" eq "$rc" 1
    check "stdin script error message" has "$err" '^gpubench: stdin:1: stdin boom$'
}

t_repl_pipe() {
    run_in $'x = 1 +\n2\nx\n1+1\nerror("oops")\nreturn "a", nil, 3\nfor i = 1, 2 do\nprint(i)\nend\n' -i
    check "exit 0 at EOF" eq "$rc" 0
    check "results on stdout, tab-separated tostring" eq "$out" $'3\n2\na\tnil\t3\n1\n2'
    check "errors do not end the REPL" has "$err" 'stdin:1: oops$'
    check "REPL errors carry no program name" eval '! has "$err" "gpubench: stdin"'
    check "prompts on stderr when stdin is not a terminal" has "$err" '^> >> > '
    run_in $'x = 1 +\n' -i
    check "EOF inside a statement reports it" has "$err" 'stdin:1: unexpected symbol near <eof>'
    check "... and exits 0" eq "$rc" 0
    cat >"$T/setx.lua" <<'EOF'
x = 41
EOF
    run_in $'x + 1\n' -i "$T/setx.lua"
    check "-i after a script keeps its globals" eq "$out" "42"
}

# Ctrl-C while a statement runs: "interrupted!", back to the prompt, the
# session goes on and exits 0 at EOF.
t_interrupt() {
    rm -f "$T/fifo"
    mkfifo "$T/fifo"
    "$GB" -i <"$T/fifo" >"$T/out" 2>"$T/err" &
    local pid=$!
    exec 3>"$T/fifo"
    echo 'print("looping") while true do end' >&3
    if ! wait_text "$T/out" looping 20; then
        exec 3>&-
        wait_for "$pid" 5
        check "the loop started" false
        return
    fi
    kill -INT "$pid"
    echo 'print("alive")' >&3
    exec 3>&-
    wait_for "$pid" 20
    check "exit 0 at EOF" eq "$rc" 0
    check "interrupted! on stderr" has "$(cat "$T/err")" 'interrupted!'
    check "alive after the interrupt" eq "$(cat "$T/out")" $'looping\nalive'
}

# The same with a live device: objects made before the interrupt still work.
t_interrupt_device() {
    run -e 'local gpu = require "gpu"; local d = gpu.open{backend = "vulkan"}; print(d.name)'
    if [ "$rc" != 0 ]; then
        skip="no Vulkan device: $(printf '%s' "$err" | head -n 1)"
        return
    fi
    rm -f "$T/fifo"
    mkfifo "$T/fifo"
    "$GB" -i <"$T/fifo" >"$T/out" 2>"$T/err" &
    local pid=$!
    exec 3>"$T/fifo"
    echo 'gpu = require "gpu"; dev = gpu.open{backend = "vulkan"}; buf = dev:buffer(16)' >&3
    echo 'print("looping") while true do buf:upload("0123456789abcdef") end' >&3
    if ! wait_text "$T/out" looping 60; then
        exec 3>&-
        wait_for "$pid" 10
        check "the loop started" false
        return
    fi
    kill -INT "$pid"
    echo 'buf:upload("fedcba9876543210"); dev:sync(); print(buf:download())' >&3
    exec 3>&-
    wait_for "$pid" 60
    check "exit 0 at EOF" eq "$rc" 0
    check "interrupted! on stderr" has "$(cat "$T/err")" 'interrupted!'
    check "the buffer still works" eq "$(cat "$T/out")" $'looping\nfedcba9876543210'
}

t_list_devices() {
    run -e 'for _, b in ipairs(require("gpu").backends()) do print(b.name) end'
    local names=$out
    run --list-devices
    check "exit 0" eq "$rc" 0
    check "no stderr" eq "$err" ""
    local listing=$out name line n shown
    check "a vulkan line" hasE "$listing" '^vulkan: (available|not available)'
    for name in $names; do
        line=$(printf '%s\n' "$listing" | grep -E "^$name: ")
        check "one line for backend $name" eq "$(lines "$line")" 1
        check "$name: available with a count, or not with a reason" \
            hasE "$line" "^$name: (available, [0-9]+ devices?|not available \(.+\))$"
        n=$(printf '%s' "$line" | sed -n 's/^.*: available, \([0-9]*\) device.*$/\1/p')
        shown=$(printf '%s\n' "$listing" | grep -cE "^  $name [0-9]+: .+")
        check "$name: one entry per device" eq "$shown" "${n:-0}"
    done
    check "device details" hasE "$listing" '^      type [a-z?]+, memory [^,]+, SMs/CUs [^,]+, L2 [^,]+, spec [^,]+ GB/s, driver .+'
    run --list-devices -e 'print("then -e")'
    check "--list-devices then -e" eq "$(printf '%s\n' "$out" | tail -n 1)" "then -e"
}

tests=(t_version t_help t_unknown_option t_bad_device t_bad_backend t_e_option t_script_error
       t_arg_table t_exit_request t_stdin_script t_repl_pipe t_interrupt t_interrupt_device
       t_list_devices)
for t in "${tests[@]}"; do
    why=""
    skip=""
    "$t"
    if [ -n "$skip" ] && [ -z "$why" ]; then
        skipped=$((skipped + 1))
        echo "skip $t: $skip"
    elif [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "ok   $t"
    else
        failed=$((failed + 1))
        echo "FAIL $t: ${why#; }"
    fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
