#!/usr/bin/env bash
# Open the intercom-pane sidebar in a new pane above pane $1 (a tmux pane id, the only argument
# the key binding passes), in that pane's folder, without moving the focus; mark it with the pane
# option @intercom-pane-owner and title it `Intercom monitor`, as `intercom-pane ensure-monitor`
# does. Run by the plugin's key binding.
#
# The folder is asked of tmux here (never put in a shell line) and handed to `split-window -c`,
# which format-expands it, through `tmux_literal`; a folder tmux would not start in as given is
# refused with a message.
set -u
export LC_ALL=C
. "$(dirname "${BASH_SOURCE[0]}")/literal.sh"

say() { tmux display-message "intercom-pane: $1"; exit 1; }

target="${1:-}"
is_pane_id "$target" || say "the sidebar key got no pane id"

option() {
    local v
    v="$(tmux show-option -gqv "$1")"
    printf '%s' "${v:-$2}"
}

bin="$(option @intercom-pane-bin intercom-pane)"
size="$(option @intercom-pane-size 25%)"
# The '.' keeps a folder's trailing newlines from being eaten by $(...).
dir="$(tmux display-message -p -t "$target" '#{pane_current_path}.')" || say "pane $target is gone"
dir="${dir%.}"
case "$dir" in
    /*) ;;
    *) say "the folder of pane $target is unknown" ;;
esac
# tmux would silently start the pane in the home folder instead.
[ -d "$dir" ] || say "the folder of pane $target no longer exists"
tmux_literal "$dir"; cwd=$REPLY
tmux_arg "$bin"; program=$REPLY
new="$(tmux split-window -b -v -d -l "$size" -t "$target" -c "$cwd" -P -F '#{pane_id}' -- "$program" monitor)" \
    && is_pane_id "$new" || say "could not open the sidebar pane"
uuid="$(cat /proc/sys/kernel/random/uuid 2>/dev/null || date +%s%N)"
tmux set-option -p -t "$new" @intercom-pane-owner "intercom-pane:$uuid"
tmux select-pane -t "$new" -T "Intercom monitor"
