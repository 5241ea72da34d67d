#!/usr/bin/env bash
# The plugin's pane key (prefix M by default), run with the pane it was pressed in ($1, a tmux
# pane id) and the client that pressed it ($2, checked against tmux's client list). One key,
# never a second sidebar:
#  - pressed in a sidebar: back to the pane the person came from (else tmux's last pane);
#  - pressed in a pane the sidebar's Enter went to (`@intercom-pane-back` on that pane, set by
#    the jump): back to that sidebar, in whatever session or window it is;
#  - a sidebar in this window, else in this session, else the one sidebar on this server (a pane
#    marked @intercom-pane-owner, as ensure-monitor and this script mark it): go there,
#    remembering where from;
#  - none: open one above pane $1, in that pane's folder (a quarter of its height, at least the
#    sidebar's usable minimum of 7 lines, at most half), marked and titled `Intercom monitor`
#    as ensure-monitor does, and go there.
#
# Only pane ids (checked to be %N) and a listed client name reach tmux as targets. The folder is
# asked of tmux here (never put in a shell line) and handed to `split-window -c`, which
# format-expands it, through `tmux_literal`; a folder tmux would not start in as given is
# refused with a message.
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

# The client that pressed the key, when tmux lists it (else the session's own selection).
client=""
if [ -n "${2:-}" ] && tmux list-clients -F '#{client_name}' | grep -qxF -- "$2"; then
    client="$2"
fi

go_to() {
    # The pressing client to that pane's session, window and pane (tmux >= 3.2); without one,
    # within the session: window first, then the pane.
    if [ -n "$client" ]; then
        tmux switch-client -c "$client" -t "$1"
    else
        tmux select-window -t "$1" && tmux select-pane -t "$1"
    fi
}

# Whether pane $1 exists on this server and carries our marker.
is_sidebar() {
    is_pane_id "$1" &&
        [ "$(tmux display-message -p -t "$1" '#{?#{@intercom-pane-owner},owned,-}' 2>/dev/null)" = owned ]
}

if is_sidebar "$target"; then
    from="$(tmux show-option -pqv -t "$target" @intercom-pane-from)"
    # A pane that is gone still answers display-message, with an empty line.
    if is_pane_id "$from" && [ "$(tmux display-message -p -t "$from" '#{pane_id}' 2>/dev/null)" = "$from" ]; then
        go_to "$from"
    else
        tmux last-pane 2>/dev/null || say "no pane to go back to"
    fi
    exit 0
fi

# Came here by the sidebar's Enter: back to that sidebar.
back="$(tmux show-option -pqv -t "$target" @intercom-pane-back)"
if is_sidebar "$back"; then
    tmux set-option -p -t "$back" @intercom-pane-from "$target"
    go_to "$back"
    exit 0
fi

sidebar="$(sidebar_in -t "$target")"
[ -n "$sidebar" ] || sidebar="$(sidebar_in -s -t "$target")"
if [ -z "$sidebar" ]; then
    # The one sidebar on this server (a worker in a session of its own); with several, which
    # one is this pane's cannot be told, and a new one is opened here.
    all="$(tmux list-panes -a -F '#{pane_id} #{?#{@intercom-pane-owner},owned,-}' 2>/dev/null | grep ' owned$')"
    [ "$(printf '%s\n' "$all" | grep -c ' owned$')" = 1 ] && sidebar="${all%% *}"
    is_pane_id "$sidebar" || sidebar=""
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
