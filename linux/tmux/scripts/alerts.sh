#!/usr/bin/env bash
# The alerts' part of the intercom-pane tmux plugin (run by intercom-pane.tmux; docs/behaviour.md
# §3b). Options (set them before the plugin loads):
#   @intercom-pane-status      on: put the attention summary (`⚑2 ✗1`) in front of          (default: on)
#                              status-right, as `#{@intercom_pane_status}`, which a running
#                              sidebar or `intercom-pane watch` keeps current (no process per
#                              status refresh); off: leave status-right alone
#   @intercom-pane-jump-key    prefix key: to the pane of the seat that alerted last      (default: J)
#   @intercom-pane-config      --config for the jump (the data root the sidebar uses)   (default: none)
# Read by the sidebar and `watch` (again every 30 s): @intercom-pane-alerts,
# @intercom-pane-alert-settle, -quiet, -status, -display, -bell, -desktop (on/off; settle in seconds).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/literal.sh"

option() {
    local v
    v="$(tmux show-option -gqv "$1")"
    printf '%s' "${v:-$2}"
}

if [ "$(option @intercom-pane-status on)" = on ]; then
    right="$(tmux show-option -gqv status-right)"
    case "$right" in
        *'@intercom_pane_status'*) ;;
        *) tmux set-option -g status-right "#{?#{@intercom_pane_status},#{@intercom_pane_status} ,}$right" ;;
    esac
fi

jump_key="$(option @intercom-pane-jump-key J)"
# The sidebar and watcher name this key in their alerts.
tmux set-option -g @intercom-pane-jump-key "$jump_key"
# Its shell line holds the script's own location (in single quotes for sh, `#` kept for tmux,
# which format-expands a run-shell line) and the pane id (`%N`) of the client that pressed it.
script="$HERE/jump-last.sh"
tmux_literal "'${script//\'/\'\\\'\'}'"
tmux bind-key "$jump_key" run-shell -b "$REPLY #{pane_id}"
