#!/usr/bin/env bash
# The restore part of the intercom-pane tmux plugin (run by intercom-pane.tmux; docs/behaviour.md
# §10). Options (set them before the plugin loads):
#   @intercom-pane-restore       on: when the tmux server starts, bring the roster's    (default: off)
#                                agents back (`intercom-pane restore`) on this server
#   @intercom-pane-restore-root  the roster's folder                               (default: $HOME)
#   @intercom-pane-config        --config for it (the data root the sidebar uses) (default: none)
# Only right after the server started (its process is at most 30 s old), never on a config
# reload; in the background, so tmux is not held; its exit code is shown with display-message
# and kept in the server option @intercom-pane-restore-exit.
set -u

option() {
    local v
    v="$(tmux show-option -gqv "$1")"
    printf '%s' "${v:-$2}"
}

[ "$(option @intercom-pane-restore off)" = on ] || exit 0
bin="$(option @intercom-pane-bin intercom-pane)"
root="$(option @intercom-pane-restore-root "${HOME:-/}")"
config="$(option @intercom-pane-config '')"
# tmux gives its jobs TMUX=<socket>,<server pid>,<session>.
sock="${TMUX%%,*}"
rest="${TMUX#*,}"
pid="${rest%%,*}"
case "$pid" in '' | *[!0-9]*) exit 0 ;; esac
[ -n "$sock" ] || exit 0
age="$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ')"
case "$age" in '' | *[!0-9]*) exit 0 ;; esac
[ "$age" -le 30 ] || exit 0

# Every value is an argv word; nothing here is handed to a shell or to tmux as a format.
args=(restore --root "$root" --tmux-socket "$sock")
[ -n "$config" ] && args+=(--config "$config")
(
    "$bin" "${args[@]}" </dev/null >/dev/null 2>&1
    code=$?
    tmux set-option -g @intercom-pane-restore-exit "$code" 2>/dev/null
    tmux display-message "intercom-pane restore: exit $code (intercom-pane restore --dry-run says why, per agent)" 2>/dev/null
) </dev/null >/dev/null 2>&1 &
exit 0
