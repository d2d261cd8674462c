# Sourced by run_fuzz.sh and minimize.sh: one line naming how a fuzz child
# failed, so failures group by cause. For a sanitizer report: its kind and
# the first frame in gpubench's own code (bindings/, host/, lib/); else the
# signal, the time limit, the kind of FUZZ-BAD line, or "pass".
fuzz_signature() { # LOG RC
  local log=$1 rc=$2 kind frame
  if grep -aq 'failed to read suppressions file' "$log"; then
    echo "sanitizer setup: $(grep -a -m1 -o 'failed to read suppressions file.*' "$log")"
  elif grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer)' "$log"; then
    kind=$(grep -a -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer): [a-zA-Z-]+( on unknown address)?' "$log")
    frame=$(grep -a -A60 -m1 -E 'ERROR: (Address|Leak)Sanitizer' "$log" |
            grep -a -m1 -oE 'in [A-Za-z_0-9]+ [^ ]*/(bindings|host|lib)/[^ :]+' | sed -E 's|in ([^ ]+) .*/([^/]+/[^/]+)$|\1 (\2)|')
    echo "asan ${kind#ERROR: } in ${frame:-?}"
  elif grep -aq 'runtime error:' "$log"; then
    echo "ubsan $(grep -a -m1 -oE '[^ ]+\.c:[0-9]+:[0-9]+: runtime error: [a-z -]+' "$log" |
                  sed -E 's|^.*/([^/]+/[^/]+\.c):[0-9]+:[0-9]+:|\1:|')"
  elif ((rc == 124 || rc == 137)); then
    echo "time limit"
  elif ((rc > 128)); then
    echo "signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null || echo '?'))"
  elif grep -aq '^FUZZ-BAD' "$log"; then
    echo "bad: $(grep -a -m1 '^FUZZ-BAD' "$log" | sed -E 's/^FUZZ-BAD [^:]*: //; s/[0-9]+/N/g' | cut -c1-70)"
  elif ((rc != 0)); then
    echo "exit $rc"
  else
    echo "pass"
  fi
}
