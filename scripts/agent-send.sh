#!/usr/bin/env bash
# agent-send.sh: deliver one message to one pi seat in tmux, as a person typing would.
#
#   agent-send.sh -s <target> -S <sender> [-L <socket>] (-m <text> | -f <file> | -)
#
# <target> is a tmux pane id (%N) or session name; <socket> is a tmux socket path (contains a /)
# or a -L name. The text is delivered as one bracketed paste (load-buffer + paste-buffer -p),
# then a separate Enter. Never Escape, Ctrl-C or Ctrl-D: they abort or end pi. No retries.
# Exit: 0 delivered; 2 usage; 3 the target does not exist; 4 a tmux step failed.
set -u

target="" sender="" socket="" text="" have_text=0
while getopts ":s:S:L:m:f:" opt; do
  case "$opt" in
    s) target=$OPTARG ;;
    S) sender=$OPTARG ;;
    L) socket=$OPTARG ;;
    m) text=$OPTARG; have_text=1 ;;
    f) text=$(head -c 65536 -- "$OPTARG") || { echo "agent-send: cannot read $OPTARG" >&2; exit 2; }; have_text=1 ;;
    *) echo "usage: agent-send.sh -s <target> -S <sender> [-L <socket>] (-m <text> | -f <file> | -)" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ "$have_text" = 0 ] && [ "${1:-}" = "-" ]; then
  text=$(head -c 65536); have_text=1
fi
if [ -z "$target" ] || [ -z "$sender" ] || [ "$have_text" = 0 ]; then
  echo "usage: agent-send.sh -s <target> -S <sender> [-L <socket>] (-m <text> | -f <file> | -)" >&2
  exit 2
fi
if [ -z "$(printf '%s' "$text" | tr -d '[:space:]')" ]; then
  echo "agent-send: refusing to send blank text" >&2
  exit 2
fi

tm() {
  # Never inherit the caller's own tmux: the socket comes from the arguments only.
  if [ -z "$socket" ]; then env -u TMUX -u TMUX_PANE timeout 5 tmux "$@"
  elif [ "${socket#*/}" != "$socket" ]; then env -u TMUX -u TMUX_PANE timeout 5 tmux -S "$socket" "$@"
  else env -u TMUX -u TMUX_PANE timeout 5 tmux -L "$socket" "$@"
  fi
}

# Resolve the target to exactly one existing pane first (a missing session must not be guessed).
case "$target" in
  %*) pane=$(tm list-panes -a -f "#{==:#{pane_id},$target}" -F '#{pane_id}' 2>/dev/null | head -n 1) ;;
  *)  pane=$(tm list-panes -t "=$target:" -F '#{pane_id} #{pane_active}' 2>/dev/null | awk '$2 == 1 {print $1; exit}') ;;
esac
if [ -z "$pane" ]; then
  echo "agent-send: no tmux pane for target $target" >&2
  exit 3
fi

buffer="agent-send-$$-$RANDOM"
printf '%s' "$text" | tm load-buffer -b "$buffer" - || { echo "agent-send: load-buffer failed" >&2; exit 4; }
tm paste-buffer -b "$buffer" -d -p -t "$pane" || { tm delete-buffer -b "$buffer" 2>/dev/null; echo "agent-send: paste-buffer failed" >&2; exit 4; }
tm send-keys -t "$pane" Enter || { echo "agent-send: send-keys Enter failed" >&2; exit 4; }
echo "delivered to $pane from $sender"
