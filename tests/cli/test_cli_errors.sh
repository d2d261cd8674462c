#!/usr/bin/env bash
# The command line against hostile input: error objects whose __tostring fails
# (no PANIC), binary chunks (refused everywhere unless --allow-binary, never a
# crash) and --device values past INT_MAX. Each case checks the exit status,
# the first line of stderr, and that no signal ended the process.
#
#   bash tests/cli/test_cli_errors.sh path/to/gpubench      (from the repo root)
set -u

GB=$(cd "$(dirname "${1:?usage: test_cli_errors.sh path/to/gpubench}")" && pwd)/$(basename "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

passed=0
failed=0

# run ARGS...: gpubench with stdin from /dev/null (or $STDIN); sets rc, out, err, first.
run() {
    "$GB" "$@" <"${STDIN:-/dev/null}" >"$T/out" 2>"$T/err"
    rc=$?
    out=$(cat "$T/out")
    err=$(cat "$T/err")
    first=$(head -n 1 "$T/err")
}

# expect DESCRIPTION STATUS FIRST_LINE: the last run's status and first stderr line.
expect() {
    local why=""
    [ "$rc" -lt 128 ] || why="$why; ended by a signal (status $rc)"
    [ "$rc" = "$2" ] || why="$why; status $rc, expected $2"
    [ "$first" = "$3" ] || why="$why; first line [$first], expected [$3]"
    case $err in *PANIC*) why="$why; PANIC on stderr" ;; esac
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "ok   $1"
    else
        failed=$((failed + 1))
        echo "FAIL $1${why}"
        sed 's/^/    | /' "$T/err" | head -n 8
    fi
}

# also DESCRIPTION CONDITION...: an extra check on the last run.
also() {
    local what=$1
    shift
    if "$@"; then passed=$((passed + 1)); echo "ok   $what"
    else failed=$((failed + 1)); echo "FAIL $what"; fi
}

# ------------------------------------------------- error objects

RAISING='setmetatable({}, {__tostring = function() error("boom", 0) end})'

run -e "error($RAISING)"
expect "an error object whose __tostring raises" 1 \
    "gpubench: (error object is a table value; its __tostring failed: boom)"
also "... still gets a traceback" grep -q '^stack traceback:$' "$T/err"

run -e 'error(setmetatable({}, {__tostring = function() return {} end}))'
expect "an error object whose __tostring returns a table" 1 \
    "gpubench: (error object is a table value; its __tostring failed: '__tostring' must return a string)"

run -e "error(setmetatable({}, {__tostring = function() error($RAISING) end}))"
expect "... whose __tostring raises an object whose __tostring raises" 1 \
    "gpubench: (error object is a table value; its __tostring failed: (error object is a table value))"

run -e "error(setmetatable({gpubench_exit = 3, message = $RAISING},
                           {__tostring = function(e) return tostring(e.message) end}))"
expect "an exit request whose message's __tostring raises: its status" 3 \
    "gpubench: (error object is a table value; its __tostring failed: boom)"

run -e "error(setmetatable({gpubench_exit = 4}, {__tostring = function() error('no text', 0) end}))"
expect "an exit request whose own __tostring raises" 4 \
    "gpubench: (error object is a table value; its __tostring failed: no text)"

STDIN=/dev/stdin run -i <<EOF
error($RAISING)
print("still here")
EOF
expect "in the REPL: the same message, and the session goes on" 0 \
    "> (error object is a table value; its __tostring failed: boom)"
also "... to the next statement" [ "$out" = "still here" ]

# ------------------------------------------------- binary chunks

REFUSED="binary chunks are refused (run with --allow-binary to load them)"
# A real chunk from string.dump, one cut short, and one with its body overwritten.
cat >"$T/make.lua" <<'EOF'
local dir = ...
local s = string.dump(function() print("binary ran") end)
local function put(name, bytes) local f = assert(io.open(dir .. "/" .. name, "wb")); f:write(bytes); f:close() end
put("valid.luac", s)
put("truncated.luac", s:sub(1, 20))
put("corrupt.luac", s:sub(1, 12) .. string.rep("\255", #s - 12))
EOF
"$GB" "$T/make.lua" "$T" || { echo "FAIL cannot write the binary chunks"; exit 1; }

for f in valid truncated corrupt; do
    run "$T/$f.luac"
    expect "a $f binary chunk as the script is refused" 1 "gpubench: $T/$f.luac: $REFUSED"
    also "... and does not run" [ -z "$out" ]
    STDIN=$T/$f.luac run -
    expect "a $f binary chunk on stdin ('-') is refused" 1 "gpubench: stdin: $REFUSED"
    STDIN=$T/$f.luac run
    expect "a $f binary chunk piped in is refused" 1 "gpubench: stdin: $REFUSED"
    run -e "print(load(assert(io.open('$T/$f.luac', 'rb')):read('a'), 'chunk', 'b'))"
    expect "load() of a $f binary chunk, even with mode 'b'" 0 ""
    also "... returns nil and the message" [ "$out" = "nil	$REFUSED" ]
    run -e "print(loadfile('$T/$f.luac', 'bt'))"
    also "loadfile() of a $f binary chunk returns nil and the message" \
        [ "$rc:$out" = "0:nil	$T/$f.luac: $REFUSED" ]
    run -e "dofile('$T/$f.luac')"
    expect "dofile() of a $f binary chunk raises" 1 "gpubench: $T/$f.luac: $REFUSED"
done

run -e "$(printf '\033Lua')"
expect "a binary chunk through -e is refused" 1 "gpubench: (command line): $REFUSED"
LUA_INIT="@$T/valid.luac" run -e 'print("after init")'
expect "a binary LUA_INIT=@file is refused" 1 "gpubench: $T/valid.luac: $REFUSED"
LUA_INIT="$(printf '\033Lua')" run -e 'print("after init")'
expect "a binary LUA_INIT string is refused" 1 "gpubench: LUA_INIT: $REFUSED"
cp "$T/valid.luac" "$T/binmod.lua"
run -e "package.path = '$T/?.lua'; require 'binmod'"
expect "require of a binary module file is refused" 1 \
    "gpubench: error loading module 'binmod' from file '$T/binmod.lua':"
also "... naming the reason" grep -qF "$T/binmod.lua: $REFUSED" "$T/err"
run -e 'print(load("return 1 + 1")())'
also "source chunks still load" [ "$rc:$out" = "0:2" ]
run -e 'print(load(function() return nil end))'
also "load() from a reader function still works" [ "$rc" = 0 ]

run --allow-binary "$T/valid.luac"
expect "--allow-binary runs a binary script" 0 ""
also "... which prints" [ "$out" = "binary ran" ]
run --allow-binary -e "assert(load(assert(io.open('$T/valid.luac', 'rb')):read('a')))()"
also "--allow-binary leaves load() taking binary chunks" [ "$rc:$out" = "0:binary ran" ]
run --allow-binary "$T/truncated.luac"
expect "--allow-binary: a truncated chunk is Lua's error, no crash" 1 \
    "gpubench: $T/truncated.luac: bad binary format (truncated chunk)"
run --help
also "--help names --allow-binary" grep -q -- '--allow-binary' "$T/out"

# ------------------------------------------------- --device range

run --device 99999999999 -e 'print("ran")'
expect "--device past INT_MAX: out of range, naming the limit" 2 \
    "gpubench: --device 99999999999 is out of range (0 to 2147483647) (try 'gpubench --help')"
also "... runs nothing" [ -z "$out" ]
run --device 2147483648 -e 'print("ran")'
expect "--device 2147483648 is out of range" 2 \
    "gpubench: --device 2147483648 is out of range (0 to 2147483647) (try 'gpubench --help')"
run --device=2147483647 -e 'print("ran")'
expect "--device 2147483647 is accepted" 0 ""
for v in x -1; do
    run --device "$v" -e 'print("ran")'
    expect "--device $v still needs a non-negative integer" 2 \
        "gpubench: --device needs a non-negative integer, got '$v' (try 'gpubench --help')"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
