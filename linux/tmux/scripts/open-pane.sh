#!/usr/bin/env bash
# The plugin's pane key (prefix M by default), run with the pane it was pressed in ($1, a tmux
# pane id, the only argument the key binding passes). One key, never a second sidebar:
#  - pressed in the sidebar: back to the pane the person came from (else tmux's last pane);
#  - a sidebar in this window, else in this session (a pane marked @intercom-pane-owner, as
#    ensure-monitor and this script mark it): go there, remembering where from;
#  - none: open one above pane $1, in that pane's folder (a quarter of its height, at least the
#    sidebar's usable minimum of 7 lines, at most half), marked and titled `Intercom monitor`
#    as ensure-monitor does, and go there.
#
# Only pane ids (checked to be %N) reach tmux as targets. The folder is asked of tmux here
# (never put in a shell line) and handed to `split-window -c`, which format-expands it, through
# `tmux_literal`; a folder tmux would not start in as given is refused with a message.
set -u
export LC_ALL=C
. "$(dirname "${BASH_SOURCE[0]}")/literal.sh"

say() { tmux display-message "intercom-pane: $1"; exit 1; }

target="${1:-}"
is_pane_id "$target" || say "the sidebar key got no pane id"

# The sidebar's usable minimum (intercom-pane's ui::layout::MIN_HEIGHT).
MIN_LINES=7

option() {
    local v
    v="$(tmux show-option -gqv "$1")"
    printf '%s' "${v:-$2}"
}

# The first marked pane in the target's window (-t pane), else in its session (-s).
sidebar_in() {
    tmux list-panes "$@" -F '#{pane_id} #{?#{@intercom-pane-owner},owned,-}' 2>/dev/null |
        while read -r id owned; do
            if [ "$owned" = owned ] && is_pane_id "$id"; then
                printf '%s\n' "$id"
                break
            fi
        done
}

go_to() {
    # From any window or pane of the session: window first, then the pane.
    tmux select-window -t "$1" && tmux select-pane -t "$1"
}

sidebar="$(sidebar_in -t "$target")"
[ -n "$sidebar" ] || sidebar="$(sidebar_in -s -t "$target")"

if [ -n "$sidebar" ] && [ "$sidebar" = "$target" ]; then
    from="$(tmux show-option -pqv -t "$sidebar" @intercom-pane-from)"
    if is_pane_id "$from" && tmux list-panes -s -t "$sidebar" -F '#{pane_id}' | grep -qx -- "$from"; then
        go_to "$from"
    else
        tmux last-pane 2>/dev/null || say "no pane to go back to"
    fi
    exit 0
fi

if [ -n "$sidebar" ]; then
    tmux set-option -p -t "$sidebar" @intercom-pane-from "$target"
    go_to "$sidebar"
    exit 0
fi

bin="$(option @intercom-pane-bin intercom-pane)"
size="$(tmux show-option -gqv @intercom-pane-size)"
if [ -z "$size" ]; then
    height="$(tmux display-message -p -t "$target" '#{pane_height}')"
    case "$height" in '' | *[!0-9]*) height=0 ;; esac
    size=$((height / 4))
    [ "$size" -ge "$MIN_LINES" ] || size=$MIN_LINES
    [ "$height" -eq 0 ] || [ "$size" -le $((height / 2)) ] || size=$((height / 2))
    [ "$size" -ge 1 ] || size=1
fi
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
tmux set-option -p -t "$new" @intercom-pane-from "$target"
go_to "$new"
