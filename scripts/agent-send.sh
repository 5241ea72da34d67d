#!/usr/bin/env bash
# agent-send.sh: deliver one message to one pi seat in tmux, as a person typing would.
#
#   agent-send.sh -s <pane id> -S <sender> [-L <socket>] [-p <pi pid>[:<start ticks>]]
#                 (-m <text> | -f <file> | -)
#
# <pane id> is a tmux pane id (%N: % and 1 to 9 digits, nothing else: tmux expands formats in our
# filter, so no other text may reach it, and a session name would pick "its active pane");
# <socket> is a tmux socket path (contains a /) or a -L name; -p names the pi that must still run
# in that pane (the pane's process is it or one of its ancestors; with start ticks, the very same
# process).
#
# Before anything is typed:
# - the text rules (the same as intercom-pane's `check_text`): no C0 control but LF and TAB (so no
#   CR, no ESC, no NUL), no DEL, no C1, no bidi embedding/override/isolate controls, valid UTF-8,
#   at most 2000 characters, at least one visible character;
# - and the rules of a text typed into pi's editor (`check_for_editor` in src/reply_text.rs): its
#   first character after leading white space is not `!` (pi runs it as a shell command; `!!`
#   too) nor `/` (pi takes it as a command), and it has no TAB (pi's editor turns it into spaces);
# - the pane: taken out of copy mode (or any mode) first, refused if it stays in one; pi's editor
#   (the lines between its two full-width rulers at the bottom of the screen) must be empty: an
#   unsent draft is refused, never glued to the message, and so is anything else between those
#   rulers (pi's selectors and dialogs draw there). A screen with no such rulers at all (not pi's
#   TUI: a simulated agent, another program) is typed into without this check, and says so.
# Then one bracketed paste (load-buffer + paste-buffer -p, skipped if the pane entered a mode
# meanwhile), then a separate Enter, then a check that pi's editor is empty again (it took the
# text). Never Escape, Ctrl-C or Ctrl-D: they abort or end pi. No retries.
#
# Exit: 0 delivered; 2 usage; 3 the target does not exist; 4 a tmux step failed; 5 the text is
# refused; 6 the pane is not ready (a mode it could not leave, a draft or a dialog in pi's
# editor); 7 the pane does not run that pi; 8 typed, but pi's editor still shows text afterwards.
set -u
export LC_ALL=C

MAX_BYTES=65536
MAX_CHARS=2000
# Characters that show nothing on their own, besides ASCII space, TAB and LF (the same list as
# INVISIBLE and char::is_whitespace in src/reply_text.rs), as UTF-8 byte sequences.
INVISIBLE=$'\xc2\xa0|\xc2\xad|\xcd\x8f|\xd8\x9c|\xe1\x85\x9f|\xe1\x85\xa0|\xe1\x9a\x80|\xe1\x9e\xb4|\xe1\x9e\xb5|\xe1\xa0\x8e|\xe2\x80[\x80-\x8f]|\xe2\x80\xa8|\xe2\x80\xa9|\xe2\x80\xaf|\xe2\x81\x9f|\xe2\x81[\xa0-\xa4]|\xe2\x81[\xaa-\xaf]|\xe2\xa0\x80|\xe3\x80\x80|\xe3\x85\xa4|\xef\xbb\xbf|\xef\xbe\xa0'
# pi's editor border: a full-width line of U+2500, or one carrying a label (a scroll indicator, a
# status loader).
RULE=$'\xe2\x94\x80'

# A tmux pane id: the only target accepted, and the only data put in a filter or command string.
is_pane_id() { [[ $1 =~ ^%[0-9]{1,9}$ ]]; }

usage() {
  echo "usage: agent-send.sh -s <pane id> -S <sender> [-L <socket>] [-p <pid>[:<ticks>]] (-m <text> | -f <file> | -)" >&2
  exit 2
}

target="" sender="" socket="" pi="" text="" file="" have_text=0
while getopts ":s:S:L:p:m:f:" opt; do
  case "$opt" in
    s) target=$OPTARG ;;
    S) sender=$OPTARG ;;
    L) socket=$OPTARG ;;
    p) pi=$OPTARG ;;
    m) text=$OPTARG; have_text=1 ;;
    f) file=$OPTARG; have_text=2 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
if [ "$have_text" = 0 ] && [ "${1:-}" = "-" ]; then
  file=/dev/stdin; have_text=2
fi
if [ -z "$target" ] || [ -z "$sender" ] || [ "$have_text" = 0 ]; then usage; fi
is_pane_id "$target" \
  || { echo "agent-send: -s wants a tmux pane id (% and digits), not a session name or other text" >&2; exit 2; }
case "$pi" in
  ''|[1-9]|[1-9][0-9]*) ;;
  *) echo "agent-send: -p wants <pid> or <pid>:<start ticks>" >&2; exit 2 ;;
esac
pi_pid=${pi%%:*} pi_ticks=""
[ "$pi" != "$pi_pid" ] && pi_ticks=${pi#*:}
case "$pi_pid$pi_ticks" in *[!0-9]*) echo "agent-send: -p wants <pid> or <pid>:<start ticks>" >&2; exit 2 ;; esac

# The text goes through a private file: a shell variable cannot hold a NUL, so the rules must see
# the bytes themselves.
tmp=$(mktemp) || { echo "agent-send: cannot make a temporary file" >&2; exit 4; }
trap 'rm -f "$tmp"' EXIT
if [ "$have_text" = 1 ]; then
  printf '%s' "$text" > "$tmp"
else
  head -c $((MAX_BYTES + 1)) -- "$file" > "$tmp" 2>/dev/null || { echo "agent-send: cannot read $file" >&2; exit 2; }
fi

refuse_text() { echo "agent-send: refused: $1; nothing was typed" >&2; exit 5; }
bytes=$(wc -c < "$tmp")
[ "$bytes" -le "$MAX_BYTES" ] || refuse_text "the text is over $MAX_BYTES bytes"
[ "$(tr -d '\000-\010\013-\037\177' < "$tmp" | wc -c)" = "$bytes" ] \
  || refuse_text "the text contains a control character (C0 other than LF and TAB, or DEL)"
command -v iconv > /dev/null || { echo "agent-send: iconv (libc-bin) is needed to check the text; nothing was typed" >&2; exit 4; }
iconv -f UTF-8 -t UTF-8 < "$tmp" > /dev/null 2>&1 || refuse_text "the text is not UTF-8"
! grep -aq $'\xc2[\x80-\x9f]' "$tmp" || refuse_text "the text contains a C1 control character"
! grep -aqE $'\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]' "$tmp" \
  || refuse_text "the text contains a bidi embedding, override or isolate control"
chars=$(tr -d '\200-\277' < "$tmp" | wc -c)
[ "$chars" -le "$MAX_CHARS" ] || refuse_text "the text is $chars characters; at most $MAX_CHARS are sent"
[ "$(sed -E "s/($INVISIBLE)//g" < "$tmp" | tr -d ' \t\n' | wc -c)" != 0 ] \
  || refuse_text "the text is blank (no visible character)"
! grep -aq $'\t' "$tmp" || refuse_text "the text has a TAB, which pi's editor turns into spaces"
# The first character pi's editor sees after its own trim (white space, as in INVISIBLE's first
# entries and JavaScript's trim: the BOM too).
TRIMMED=$'\xc2\xa0|\xe1\x9a\x80|\xe2\x80[\x80-\x8a]|\xe2\x80\xa8|\xe2\x80\xa9|\xe2\x80\xaf|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf'
first=$(tr '\n' ' ' < "$tmp" | sed -E "s/^(($TRIMMED)|[ ])*//" | head -c 1)
case "$first" in
  '!') refuse_text "the text starts with '!', which pi's editor runs as a shell command" ;;
  /) refuse_text "the text starts with '/', which pi's editor takes as a command" ;;
esac

tm() {
  # Never inherit the caller's own tmux: the socket comes from the arguments only.
  if [ -z "$socket" ]; then env -u TMUX -u TMUX_PANE timeout 5 tmux "$@"
  elif [ "${socket#*/}" != "$socket" ]; then env -u TMUX -u TMUX_PANE timeout 5 tmux -S "$socket" "$@"
  else env -u TMUX -u TMUX_PANE timeout 5 tmux -L "$socket" "$@"
  fi
}

# Resolve the target to exactly one existing pane first. Only a pane id (`is_pane_id`) is ever put
# in a filter or a command string below: nothing a format would expand.
pane=$(tm list-panes -a -f "#{==:#{pane_id},$target}" -F '#{pane_id}' 2>/dev/null | head -n 1)
is_pane_id "$pane" && [ "$pane" = "$target" ] \
  || { echo "agent-send: no tmux pane $target" >&2; exit 3; }
not_ready() { echo "agent-send: refused: $1; nothing was typed" >&2; exit 6; }
pane_field() { tm list-panes -a -f "#{==:#{pane_id},$pane}" -F "$1" 2>/dev/null | head -n 1; }

# The pane must still run that pi: its process is the pi or one of the pi's ancestors.
if [ -n "$pi_pid" ]; then
  pane_pid=$(pane_field '#{pane_pid}')
  stat=$(cat "/proc/$pi_pid/stat" 2>/dev/null) || { echo "agent-send: pi $pi_pid is gone" >&2; exit 7; }
  rest=${stat##*) }
  read -r -a f <<< "$rest"
  if [ -n "$pi_ticks" ] && [ "${f[19]:-}" != "$pi_ticks" ]; then
    echo "agent-send: pid $pi_pid is another process now" >&2; exit 7
  fi
  p=$pi_pid found=0
  for _ in $(seq 64); do
    if [ "$p" = "$pane_pid" ]; then found=1; break; fi
    s=$(cat "/proc/$p/stat" 2>/dev/null) || break
    r=${s##*) }; read -r -a g <<< "$r"; p=${g[1]:-0}
    [ "$p" -gt 1 ] || break
  done
  [ "$found" = 1 ] || { echo "agent-send: pane $pane does not run pi $pi_pid" >&2; exit 7; }
fi

# Copy mode (or any mode) shows the person something else and eats keys: leave it, or refuse.
if [ "$(pane_field '#{pane_in_mode}')" = 1 ]; then
  tm send-keys -X -t "$pane" cancel 2>/dev/null
  for _ in 1 2 3 4 5; do
    [ "$(pane_field '#{pane_in_mode}')" = 1 ] || break
    sleep 0.1
  done
  [ "$(pane_field '#{pane_in_mode}')" != 1 ] || not_ready "pane $pane stays in a mode (copy mode?)"
fi

# pi's editor: "empty", "draft" (a draft, a selector or dialog), "none" (no ruler on screen: not
# pi's TUI), or "unknown" (rulers, but not the editor's shape).
editor() {
  local width
  width=$(pane_field '#{pane_width}')
  tm capture-pane -p -t "$pane" 2>/dev/null | awk -v rule="$RULE" -v width="$width" '
    function is_rule(l,   plain) {
      plain = l; gsub(rule, "", plain)
      if (plain == "") return length(l) == 3 * width
      # A labelled border: the scroll indicator (" ↑ 3 more "), or the status loader pi draws in
      # the top border ("── ⠙ Retrying (2/3) in 3s... ───").
      return index(l, rule) == 1 && substr(l, length(l) - 2) == rule && plain ~ /^ .* $/
    }
    function scrolled(l) { return l ~ / (\342\206\221|\342\206\223) [0-9]+ more / }
    { line[NR] = $0 }
    END {
      for (b = NR; b > 0 && !is_rule(line[b]); b--) {}
      if (b <= 0) { print "none"; exit }
      for (t = b - 1; t > 0 && !is_rule(line[t]); t--) {}
      if (t <= 0 || b - t < 2) { print "unknown"; exit }
      if (b - t > 2 || scrolled(line[t]) || scrolled(line[b])) { print "draft"; exit }
      print (line[t + 1] ~ /[^ ]/) ? "draft" : "empty"
    }'
}
seen=$(editor)
case "$seen" in
  empty|none) ;;
  draft) not_ready "pi's editor in pane $pane holds an unsent draft (or shows a dialog)" ;;
  *) not_ready "pi's editor in pane $pane could not be read" ;;
esac

buffer="agent-send-$$-$RANDOM"
tm load-buffer -b "$buffer" - < "$tmp" || { echo "agent-send: load-buffer failed" >&2; exit 4; }
# Checked and pasted in one server pass: no gap for a mode to start in between.
out=$(tm if-shell -F -t "$pane" '#{pane_in_mode}' "display-message -p agent-send:in-mode" \
  "paste-buffer -b $buffer -d -p -t $pane") \
  || { tm delete-buffer -b "$buffer" 2>/dev/null; echo "agent-send: paste-buffer failed" >&2; exit 4; }
if [ "$out" = "agent-send:in-mode" ]; then
  tm delete-buffer -b "$buffer" 2>/dev/null
  not_ready "pane $pane entered a mode just before the paste"
fi
# Enter must reach pi, not a mode entered since the paste.
tm if-shell -F -t "$pane" '#{pane_in_mode}' "send-keys -X -t $pane cancel ; send-keys -t $pane Enter" \
  "send-keys -t $pane Enter" || { echo "agent-send: send-keys Enter failed" >&2; exit 4; }
if [ "$seen" = none ]; then
  echo "delivered to $pane from $sender (no pi editor on screen to check)"
  exit 0
fi
for _ in $(seq 20); do
  [ "$(editor)" = empty ] && { echo "delivered to $pane from $sender"; exit 0; }
  sleep 0.1
done
echo "agent-send: typed into $pane, but pi's editor still shows text: not confirmed" >&2
exit 8
