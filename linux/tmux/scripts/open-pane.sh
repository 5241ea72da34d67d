#!/usr/bin/env bash
# Open the intercom-pane sidebar in a new pane above pane $1 (a tmux pane id), in folder $2,
# without moving the focus; mark it with the pane option @intercom-pane-owner and title it
# `Intercom monitor`, as `intercom-pane ensure-monitor` does. Run by the plugin's key binding.
set -u
target="$1"
dir="$2"

option() {
    local v
    v="$(tmux show-option -gqv "$1")"
    printf '%s' "${v:-$2}"
}

bin="$(option @intercom-pane-bin intercom-pane)"
size="$(option @intercom-pane-size 25%)"
new="$(tmux split-window -b -v -d -l "$size" -t "$target" -c "$dir" -P -F '#{pane_id}' -- "$bin" monitor)" || {
    tmux display-message "intercom-pane: could not open the sidebar pane"
    exit 1
}
uuid="$(cat /proc/sys/kernel/random/uuid 2>/dev/null || date +%s%N)"
tmux set-option -p -t "$new" @intercom-pane-owner "intercom-pane:$uuid"
tmux select-pane -t "$new" -T "Intercom monitor"
