#!/bin/sh
# The commit-msg hook (scripts/git-hooks/commit-msg) takes a subject of 72
# characters with a body after a blank line, and refuses a subject of 73, an
# empty one, and a body without the blank line.
set -u
hook=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
s72=$(printf '%072d' 0 | tr 0 x)
check() {  # check EXPECTED-RC NAME MESSAGE
  printf '%s' "$3" > "$dir/msg"
  "$hook" "$dir/msg" 2>"$dir/err"
  rc=$?
  if [ "$rc" -ne "$1" ]; then
    echo "FAIL: $2: rc $rc, wanted $1 ($(cat "$dir/err"))"; fails=$((fails + 1))
  else
    echo "ok: $2"
  fi
}
check 0 "72 characters and a body" "$s72

The body says why."
check 0 "a subject alone" "short subject"
check 0 "git's comment lines do not count" "# a comment line longer than seventy-two characters, as git writes them in the editor
short subject"
check 1 "73 characters" "${s72}y"
check 1 "an empty subject" "
body"
check 1 "no blank line before the body" "subject
body"
exit $fails
